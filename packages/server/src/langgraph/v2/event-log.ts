/**
 * The v2 event log of each thread in this process: every protocol event gets a sequence number,
 * the latest run's events are kept so that a stream opened late (or re-opened: the client
 * rotates its stream whenever it subscribes to more) replays them, and open streams get the
 * rest live, each through its own filter.
 */
import { randomUUID } from "node:crypto";
import { baseSegment } from "./mapping.ts";
import type { EventFilter, EventMethod, Namespace, ProtocolEvent } from "./protocol.ts";

/** The subscription channel an event belongs to (`custom:<name>` for a named custom event). */
export function channelOf(event: ProtocolEvent): string {
  switch (event.method) {
    case "input.requested":
    case "input.answered":
      return "input";
    case "custom": {
      const data = event.params.data as { name?: unknown } | null;
      return typeof data?.name === "string" ? `custom:${data.name}` : "custom";
    }
    default:
      return event.method;
  }
}

function isPrefix(namespace: readonly string[], prefix: readonly string[]): boolean {
  if (prefix.length > namespace.length) return false;
  return prefix.every((segment, i) => {
    const candidate = namespace[i] ?? "";
    if (candidate === segment) return true;
    return !segment.includes(":") && baseSegment(candidate) === segment;
  });
}

/**
 * Whether a stream's filter lets an event through: its channel is asked for (`custom` takes
 * every named custom event too) and its namespace lies under one of the prefixes, no deeper than
 * `depth` below it. The same rules as the client's own per-subscription narrowing.
 */
export function matchesFilter(event: ProtocolEvent, filter: EventFilter): boolean {
  const channel = channelOf(event);
  const wanted =
    filter.channels.includes(channel) ||
    (channel.startsWith("custom:") && filter.channels.includes("custom"));
  if (!wanted) return false;
  if (!filter.namespaces || filter.namespaces.length === 0) return true;
  const namespace = event.params.namespace;
  return filter.namespaces.some(
    (prefix) =>
      isPrefix(namespace, prefix) &&
      (filter.depth === undefined || namespace.length - prefix.length <= filter.depth),
  );
}

/** Receives each event of a thread as it is emitted. */
export type EventListener = (event: ProtocolEvent) => void;

/** The events of one thread in this process. */
export class ThreadEventLog {
  private buffer: ProtocolEvent[] = [];
  private readonly listeners = new Set<EventListener>();
  // From 1, not 0: a command reports the last seq before its run as `applied_through_seq`, and
  // the client reads 0 there as "unknown" and then looks for the run's boundary on the stream.
  private seq = 1;
  private runs = 0;
  /**
   * The interrupt ids the log's events last said are pending (a run's end, a snapshot, a change
   * made elsewhere): what a change made through another path is compared against.
   */
  pending = new Set<string>();

  constructor(
    private readonly epoch: string,
    private readonly capacity = 5000,
  ) {}

  /** Whether no event of the latest run is kept (a stream opened now would replay nothing). */
  get empty(): boolean {
    return this.buffer.length === 0;
  }

  /** Whether any stream listens. */
  get listened(): boolean {
    return this.listeners.size > 0;
  }

  /** The seq of the latest event (1 before any): what a command reports as applied through. */
  get lastSeq(): number {
    return this.seq;
  }

  /** Whether a run this layer started on the thread is still going. */
  get running(): boolean {
    return this.runs > 0;
  }

  /** Marks a run started; the returned function marks it finished (once). */
  runStarted(): () => void {
    this.runs += 1;
    let finished = false;
    return () => {
      if (finished) return;
      finished = true;
      this.runs -= 1;
    };
  }

  /**
   * A new run begins: the previous run's events are no longer replayed to new streams (open
   * streams saw them). Sequence numbers keep growing.
   */
  beginRun(): void {
    this.buffer = [];
  }

  /** Appends an event and hands it to every open stream. */
  emit(method: EventMethod, namespace: Namespace, data: unknown, node?: string): ProtocolEvent {
    const seq = ++this.seq;
    const event: ProtocolEvent = {
      type: "event",
      method,
      params: {
        namespace: [...namespace],
        timestamp: Date.now(),
        ...(node !== undefined ? { node } : {}),
        data,
      },
      seq,
      event_id: `${this.epoch}-${seq}`,
    };
    this.buffer.push(event);
    // A very long run keeps only its latest events; a client that falls behind reads state.
    if (this.buffer.length > this.capacity) this.buffer.shift();
    for (const listener of this.listeners) listener(event);
    return event;
  }

  /** Replays the kept events after `since`, then delivers live ones. Returns the unsubscribe. */
  subscribe(since: number, listener: EventListener): () => void {
    for (const event of this.buffer) if (event.seq > since) listener(event);
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/**
 * The logs of every thread this process has events for. A log nobody listens to and no run
 * writes is dropped after `retainMs`, so memory follows the threads in use, not all threads.
 */
export class ThreadEventLogs {
  /** Distinguishes this process's event ids from those of an earlier start. */
  private readonly epoch = randomUUID().slice(0, 8);
  private readonly logs = new Map<string, ThreadEventLog>();
  private readonly busy = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly retainMs = 5 * 60_000) {}

  /** The thread's log if this process has one (nothing is created). */
  peek(threadId: string): ThreadEventLog | undefined {
    return this.logs.get(threadId);
  }

  /** The thread's log, created on first use. */
  of(threadId: string): ThreadEventLog {
    let log = this.logs.get(threadId);
    if (!log) this.logs.set(threadId, (log = new ThreadEventLog(this.epoch)));
    return log;
  }

  /** Marks the thread in use (a run or a stream) until the returned release is called. */
  hold(threadId: string): () => void {
    const timer = this.timers.get(threadId);
    if (timer) {
      clearTimeout(timer);
      this.timers.delete(threadId);
    }
    this.busy.set(threadId, (this.busy.get(threadId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.busy.get(threadId) ?? 1) - 1;
      if (left > 0) {
        this.busy.set(threadId, left);
        return;
      }
      this.busy.delete(threadId);
      const drop = setTimeout(() => {
        this.timers.delete(threadId);
        if (!this.busy.has(threadId)) this.logs.delete(threadId);
      }, this.retainMs);
      drop.unref();
      this.timers.set(threadId, drop);
    };
  }

  /** Stops the drop timers (server shutdown). */
  close(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
