/**
 * Events of one run, kept so that clients can join late: every event gets a sequence id, a
 * bounded buffer replays what a joining client missed (`Last-Event-ID`), and listeners get the
 * rest live.
 */

/** One event as sent over SSE. */
export interface HubEvent {
  /** Sequence number within the run, from 1. */
  id: number;
  /** SSE event name: a core stream event type, or `run`, `error`. */
  event: string;
  data: unknown;
}

/** Called with each event, then with `null` when the run has finished. */
export type HubListener = (event: HubEvent | null) => void;

/** The event log of one run in this process. */
export class RunHub {
  private readonly buffer: HubEvent[] = [];
  private readonly listeners = new Set<HubListener>();
  private seq = 0;
  private finishedFlag = false;
  /** Also receives every event (to mirror it to other processes). */
  onPublish: ((hub: RunHub, event: HubEvent) => void) | null = null;

  constructor(
    readonly threadId: string,
    readonly runId: string,
    private readonly capacity = 2000,
  ) {}

  /** Whether the run has finished (no more events will come). */
  get finished(): boolean {
    return this.finishedFlag;
  }

  /** Appends an event and hands it to every listener. */
  publish(event: string, data: unknown): void {
    if (this.finishedFlag) return;
    const entry: HubEvent = { id: ++this.seq, event, data };
    this.buffer.push(entry);
    // A long run keeps only its latest events; a client that falls further behind re-reads state.
    if (this.buffer.length > this.capacity) this.buffer.shift();
    for (const listener of this.listeners) listener(entry);
    this.onPublish?.(this, entry);
  }

  /** Marks the run finished and tells every listener. */
  finish(): void {
    if (this.finishedFlag) return;
    this.finishedFlag = true;
    for (const listener of this.listeners) listener(null);
    this.listeners.clear();
  }

  /**
   * Replays buffered events after `afterId`, then delivers live ones. Returns the unsubscribe
   * function.
   */
  subscribe(afterId: number, listener: HubListener): () => void {
    for (const entry of this.buffer) if (entry.id > afterId) listener(entry);
    if (this.finishedFlag) {
      listener(null);
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
