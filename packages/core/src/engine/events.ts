/**
 * Stream events. Every event carries the namespace of the graph that produced it (`[]` for the
 * root), so a consumer can tell a sub-agent's events from the orchestrator's.
 */
import type { StoredInterrupt } from "../checkpoint/types.ts";
import type { StreamMode } from "../graph/options.ts";
import type { CheckpointId, RunId, TaskId } from "../ids.ts";
import { toPublicInterrupt } from "../interrupts/records.ts";
import type { Interrupt, RunResult } from "../types.ts";

/** One event of `graph.stream(...)`. */
export type StreamEvent =
  | { type: "values"; namespace: string[]; values: Record<string, unknown> }
  | { type: "updates"; namespace: string[]; node: string; taskId: TaskId; update: unknown }
  | { type: "custom"; namespace: string[]; node: string; taskId: TaskId; data: unknown }
  | {
      /** A model's streamed delta (token text, reasoning, a tool call, usage). */
      type: "messages";
      namespace: string[];
      node: string;
      taskId: TaskId;
      runId: RunId;
      delta: unknown;
    }
  | {
      type: "tasks";
      namespace: string[];
      node: string;
      taskId: TaskId;
      phase: "start" | "end";
      outcome?: "writes" | "paused" | "error" | "cancelled";
    }
  | {
      type: "checkpoints";
      namespace: string[];
      checkpointId: CheckpointId;
      step: number;
      next: string[];
    }
  | { type: "debug"; namespace: string[]; message: string; data?: Record<string, unknown> }
  | { type: "interrupt"; namespace: string[]; interrupt: Interrupt }
  | { type: "end"; namespace: string[]; result: RunResult };

/** Receives events; `wants` tells producers whether building an event is worth it. */
export interface EventSink {
  wants(mode: StreamMode): boolean;
  push(event: StreamEvent): void;
}

/** A sink that drops everything (plain `invoke`). */
export const silentSink: EventSink = { wants: () => false, push: () => undefined };

/**
 * An async queue turning pushed events into an async iterator, for `graph.stream`.
 */
export class EventQueue implements EventSink, AsyncIterable<StreamEvent> {
  private readonly buffer: StreamEvent[] = [];
  private waiting: ((result: IteratorResult<StreamEvent>) => void) | null = null;
  private closed = false;
  private failure: unknown = null;

  constructor(private readonly modes: ReadonlySet<StreamMode>) {}

  wants(mode: StreamMode): boolean {
    return this.modes.has(mode);
  }

  push(event: StreamEvent): void {
    if (this.closed) return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve({ value: event, done: false });
    } else this.buffer.push(event);
  }

  /** Ends the stream; a failure is rethrown to the consumer after buffered events. */
  close(failure?: unknown): void {
    this.closed = true;
    this.failure = failure ?? null;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve({ value: undefined, done: true });
    }
  }

  private rethrow(): void {
    if (this.failure === null) return;
    throw this.failure instanceof Error ? this.failure : new Error(JSON.stringify(this.failure));
  }

  async *[Symbol.asyncIterator](): AsyncIterator<StreamEvent> {
    for (;;) {
      const next = this.buffer.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.closed) {
        this.rethrow();
        return;
      }
      const result = await new Promise<IteratorResult<StreamEvent>>((resolve) => {
        this.waiting = resolve;
      });
      if (result.done) {
        this.rethrow();
        return;
      }
      yield result.value;
    }
  }
}

/** Emits an `interrupt` event for a stored interrupt. */
export function emitInterrupt(sink: EventSink, record: StoredInterrupt): void {
  sink.push({
    type: "interrupt",
    namespace: [...record.namespace],
    interrupt: toPublicInterrupt(record),
  });
}
