/**
 * Messages between the processes of one deployment, over Postgres LISTEN/NOTIFY: the process that
 * executes a run publishes each of its events; a process serving a join of that run receives
 * them; queue wake-ups, cancel requests and replay requests travel the same channel.
 *
 * NOTIFY is not durable: a notification sent while a listener is disconnected is lost. So the
 * listening connection is reopened after any error (a Postgres restart drops it), every
 * reconnect is announced to the process ({@link PgFanout.onReconnect}) so it can re-read what it
 * may have missed (queued runs) and ask the executors to replay run events after the last id it
 * saw; run events carry ids, so a gap is seen too and asked for again.
 */
import pg from "pg";
import type { HubEvent } from "../hub.ts";

/** A message on the fan-out channel. */
export type FanoutMessage =
  /** An event of a run, published by the process executing it. */
  | {
      kind: "event";
      runId: string;
      threadId: string;
      event: HubEvent;
      done: boolean;
      /** The hub's `attempt` (absent from processes of earlier versions). */
      attempt?: string;
    }
  /** A thread's pending interrupts may have changed (the live approval queue re-reads). */
  | { kind: "change"; threadId: string }
  /** A thread has queued runs: a process with free capacity may start the next one. */
  | { kind: "queued"; threadId: string }
  /** Stop this run at its next step boundary (a multitask `interrupt` or `rollback`). */
  | { kind: "cancel"; runId: string }
  /**
   * Send the events of this run after `after` again: a listener missed some. `attempt`: the
   * attempt whose ids `after` counts (absent when the listener has seen none).
   */
  | { kind: "replay"; runId: string; after: number; attempt?: string };

/** A replay request as listeners receive it. */
export type ReplayRequest = Omit<FanoutMessage & { kind: "replay" }, "kind">;

/** A run event message. */
export type RunEventMessage = FanoutMessage & { kind: "event" };

/** NOTIFY payloads must stay under 8000 bytes; larger events are sent as a stub. */
const MAX_PAYLOAD = 7500;

/** Delays between attempts to reopen the listening connection, in ms (the last one repeats). */
const RECONNECT_DELAYS = [50, 100, 250, 500, 1000, 2000];

/** Where the listener's losses and reconnects are logged (a pino logger fits). */
export interface FanoutLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/** How long one attempt to open the listening connection may take. */
const CONNECT_TIMEOUT_MS = 10_000;

type Listener<M> = (message: M) => void;

/** One LISTEN connection per process, dispatching to subscribers, reopened when it fails. */
export class PgFanout {
  private readonly channel: string;
  private listener: pg.Client | null = null;
  private stopped = false;
  private attempt = 0;
  /** When the listening connection was lost (for the reconnect's log line), or null. */
  private lostAt: number | null = null;
  private readonly runListeners = new Map<string, Set<Listener<RunEventMessage>>>();
  private readonly listeners = {
    change: new Set<Listener<string>>(),
    queued: new Set<Listener<string>>(),
    cancel: new Set<Listener<string>>(),
    replay: new Set<Listener<ReplayRequest>>(),
    reconnect: new Set<() => void>(),
  };
  /** Messages published in this tick, sent together by {@link PgFanout.flush}. */
  private readonly outbox: FanoutMessage[] = [];
  /** This process's id, so it can ignore its own notifications. */
  readonly origin = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;

  constructor(
    private readonly pool: pg.Pool,
    private readonly connectionString: string,
    schema: string,
    private readonly log?: FanoutLog,
  ) {
    // One channel per schema, so deployments (and tests) sharing a server do not hear each other.
    this.channel = `rein_${schema}`.slice(0, 63);
  }

  /**
   * Whether this process listens at all: not behind a transaction-mode pooler given no direct
   * URL (an empty connection string), where its sweep finds other processes' work instead.
   */
  get listens(): boolean {
    return this.connectionString !== "";
  }

  /** Whether the listening connection is open. */
  get listening(): boolean {
    return this.listener !== null;
  }

  /** Opens the LISTEN connection (and keeps reopening it until {@link PgFanout.stop}). */
  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    // A bounded connect: an attempt against a host that does not answer must fail and be
    // retried, not hang the reconnect loop.
    const client = new pg.Client({
      connectionString: this.connectionString,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    // Errors of an idle client come as events; without a listener they would crash the process.
    client.on("error", (error) => this.lost(client, error));
    client.on("end", () => this.lost(client));
    client.on("notification", (n) => {
      if (n.channel === this.channel && n.payload) this.receive(n.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
    } catch (error) {
      // Not awaited: `end()` of a client whose connect failed may never settle, and awaiting it
      // stopped the reconnect loop for good.
      client.end().catch(() => undefined);
      throw error;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    this.attempt = 0;
  }

  /** The listening connection failed: reopen it, then tell the process it may have missed messages. */
  private lost(client: pg.Client, error?: Error): void {
    if (this.listener !== client) return;
    this.listener = null;
    this.lostAt = Date.now();
    this.log?.warn(
      { err: error ?? "connection ended", channel: this.channel },
      "postgres: the listener connection was lost; reconnecting with backoff (sweeps cover the gap)",
    );
    client.end().catch(() => undefined);
    this.reconnectLater();
  }

  private reconnectLater(): void {
    if (this.stopped) return;
    const delay = RECONNECT_DELAYS[Math.min(this.attempt, RECONNECT_DELAYS.length - 1)] ?? 2000;
    this.attempt += 1;
    setTimeout(() => {
      if (this.stopped) return;
      const attempts = this.attempt;
      this.connect().then(
        () => {
          if (!this.listener) return;
          this.log?.info(
            { attempts, downMs: Date.now() - (this.lostAt ?? Date.now()) },
            "postgres: the listener connection reconnected",
          );
          for (const l of this.listeners.reconnect) l();
        },
        (error: unknown) => {
          // One line per few attempts: an outage of minutes must not flood the log.
          if (this.attempt % 10 === 0)
            this.log?.warn(
              { err: error, attempts: this.attempt },
              "postgres: the listener is still reconnecting",
            );
          this.reconnectLater();
        },
      );
    }, delay).unref();
  }

  private receive(payload: string): void {
    let parsed: { origin: string; messages?: FanoutMessage[]; message?: FanoutMessage };
    try {
      parsed = JSON.parse(payload) as typeof parsed;
    } catch {
      return;
    }
    if (parsed.origin === this.origin) return;
    // `message`: one message per notification, as processes of earlier versions send them.
    for (const message of parsed.messages ?? (parsed.message ? [parsed.message] : []))
      this.dispatch(message);
  }

  private dispatch(message: FanoutMessage): void {
    switch (message.kind) {
      case "event":
        for (const l of this.runListeners.get(message.runId) ?? []) l(message);
        return;
      case "change":
      case "queued":
        for (const l of this.listeners[message.kind]) l(message.threadId);
        return;
      case "cancel":
        for (const l of this.listeners.cancel) l(message.runId);
        return;
      case "replay":
        for (const l of this.listeners.replay)
          l({
            runId: message.runId,
            after: message.after,
            ...(message.attempt === undefined ? {} : { attempt: message.attempt }),
          });
        return;
    }
  }

  /**
   * Publishes a message to every other process. Messages published in one tick of the event loop
   * go out together, packed into as few notifications as fit, in one query: a resume emits
   * several events, and each `NOTIFY` takes Postgres's global notification lock at commit, so one
   * notification per event made concurrent resumes queue behind each other. A failed send is
   * dropped: listeners see the gap in event ids (or reconnect) and ask for a replay, and the
   * queue's sweep finds queued runs nobody was told of.
   */
  publish(message: FanoutMessage): void {
    this.outbox.push(message);
    if (this.outbox.length === 1) setImmediate(() => this.flush());
  }

  private flush(): void {
    const messages = this.outbox.splice(0);
    const payloads: string[] = [];
    let batch: string[] = [];
    let size = 0;
    const close = (): void => {
      if (batch.length > 0) payloads.push(this.envelope(batch));
      batch = [];
      size = 0;
    };
    for (const message of messages) {
      const text = this.encode(message);
      // The envelope and a separator per message stay well inside the margin below the limit.
      if (size + text.length + 64 > MAX_PAYLOAD) close();
      batch.push(text);
      size += text.length + 1;
    }
    close();
    if (this.stopped) return;
    this.pool
      .query("SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload", [
        this.channel,
        payloads,
      ])
      .catch(() => undefined);
  }

  /** One message as JSON, with an event too large for a notification replaced by a stub. */
  private encode(message: FanoutMessage): string {
    const text = JSON.stringify(message);
    if (text.length + 64 <= MAX_PAYLOAD || message.kind !== "event") return text;
    return JSON.stringify({
      ...message,
      event: { ...message.event, data: { truncated: true, type: message.event.event } },
    });
  }

  private envelope(encoded: string[]): string {
    return `{"origin":${JSON.stringify(this.origin)},"messages":[${encoded.join(",")}]}`;
  }

  /** Receives the events of one run published by other processes. */
  subscribeRun(runId: string, listener: Listener<RunEventMessage>): () => void {
    let set = this.runListeners.get(runId);
    if (!set) this.runListeners.set(runId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.runListeners.delete(runId);
    };
  }

  /** Receives "this thread's queue may have changed" from other processes. */
  onChange(listener: Listener<string>): () => void {
    return this.add(this.listeners.change, listener);
  }

  /** Receives "this thread has queued runs" from other processes. */
  onQueued(listener: Listener<string>): () => void {
    return this.add(this.listeners.queued, listener);
  }

  /** Receives "cancel this run" from other processes. */
  onCancel(listener: Listener<string>): () => void {
    return this.add(this.listeners.cancel, listener);
  }

  /** Receives "replay this run's events after an id" from other processes. */
  onReplay(listener: Listener<ReplayRequest>): () => void {
    return this.add(this.listeners.replay, listener);
  }

  /** Called each time the listening connection was reopened (messages may have been missed). */
  onReconnect(listener: () => void): () => void {
    return this.add(this.listeners.reconnect, listener);
  }

  private add<T>(set: Set<T>, listener: T): () => void {
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Closes the LISTEN connection for good. */
  async stop(): Promise<void> {
    this.stopped = true;
    const client = this.listener;
    this.listener = null;
    await client?.end().catch(() => undefined);
  }
}
