/**
 * Options of `compile()` and of one call, and the helpers that build them.
 */
import type { RuntimeStore } from "../checkpoint/types.ts";
import type { DeterminismMode } from "./definition.ts";

/** Stream modes a caller can subscribe to. Interrupt events are always delivered. */
export type StreamMode =
  "values" | "updates" | "custom" | "messages" | "tasks" | "checkpoints" | "debug";

/** How long a lease lasts without renewal, and how long a caller waits for a busy thread. */
export interface LeaseSettings {
  ttlMs: number;
  waitMs: number;
}

/** Options of `StateGraph.compile`. */
export interface CompileOptions {
  /** Where runs are stored. Required for interrupts, resume, state and history. */
  checkpointer?: RuntimeStore;
  /** Pause before these nodes (names, or subgraph paths like `"supervisor/*\/tools"`). */
  interruptBefore?: string[];
  /** Pause after these nodes. */
  interruptAfter?: string[];
  /**
   * Graph name: the sub-agent id is this name plus the child run id; interrupts, runs and deadline
   * timers are scoped by it. Default: `graph-<hash of the definition>` (see docs/interrupts.md).
   */
  name?: string;
  /** Determinism guard on re-run interrupt payloads. Default `"strict"`. */
  determinism?: DeterminismMode;
  /** Maximum supersteps per call. Default 100. */
  recursionLimit?: number;
  /** Lease timing for per-thread serialization across processes. */
  lease?: Partial<LeaseSettings>;
}

/** Options of one call. */
export interface RunOptions {
  threadId?: string;
  /** Run from this past checkpoint: a fork (a new run from that state). */
  checkpointId?: string;
  /** Per-run static interrupts; they hold for the whole run, across resumes. */
  interruptBefore?: string[];
  interruptAfter?: string[];
  signal?: AbortSignal;
  /** Plain input to a thread with pending interrupts: `"error"` (default) or `"cancel"` them. */
  onPending?: "error" | "cancel";
  /** Who acts (recorded in the audit log); {@link ANONYMOUS_ACTOR} when nobody is named. */
  actor?: string;
  /** Tenant of a new thread. */
  tenant?: string | null;
  /** Metadata of a new thread. */
  metadata?: Record<string, unknown>;
  /**
   * Makes the call safe to retry (an HTTP `Idempotency-Key`): a call with a request id that was
   * made before returns the first call's result, also while that call is still running (the
   * retry waits for the thread's lease, then finds the stored result), and a retry after a crash
   * continues the run the first attempt started — same task ids, same idempotency keys — instead
   * of starting a second one. Request ids are global to the store: make them unique per call.
   */
  requestId?: string;
  /**
   * Id of the run that plain input starts (default: a fresh UUID). Lets a caller that runs the
   * graph in the background (the HTTP server) name the run before it starts.
   */
  runId?: string;
}

/** Options of `stream`. */
export interface StreamOptions extends RunOptions {
  /** Modes to receive; default `["values"]`. `interrupt` and `end` events always come. */
  streamMode?: StreamMode | StreamMode[];
}

/** Helpers to build call options. */
export const RunConfig = {
  /** Options addressing a thread: `RunConfig.thread("support-123")`. */
  thread(threadId: string, extra: Omit<RunOptions, "threadId"> = {}): RunOptions {
    return { ...extra, threadId };
  },
};

/**
 * The actor recorded for a call that names none (and the subject of a server route that needs no
 * token): one spelling, so the audit log and the server agree on who "nobody" is.
 */
export const ANONYMOUS_ACTOR = "anonymous";
