/**
 * Events of one run, kept so that clients can join late: every event gets a sequence id, a
 * bounded buffer replays what a joining client missed (`Last-Event-ID`), and listeners get the
 * rest live.
 */

import { randomBytes } from "node:crypto";

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
  /**
   * This attempt of the run: a continuation after an answer, or a takeover by another process,
   * gets a new hub whose ids start again at 1, so a follower in another process tells attempts
   * apart by this id, not by the event ids. It starts with the creation time, so a later
   * attempt's id sorts after an earlier one's (processes' clocks agree to well within the lease
   * that must expire before a takeover).
   */
  readonly attempt = `${Date.now().toString(36).padStart(9, "0")}.${randomBytes(6).toString("base64url")}`;
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

  /** The id of the latest event (0 before the first). */
  get lastId(): number {
    return this.seq;
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
