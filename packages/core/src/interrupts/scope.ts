/**
 * What raising an interrupt needs from the run it is raised in. The engine's `Execution` is one;
 * the shapes are declared here, below the engine, so interrupts/ never imports the engine that
 * drives it.
 */
import type { StreamKey } from "../checkpoint/types.ts";
import type { DeterminismMode } from "../graph/definition.ts";
import type { ApproversSpec } from "../graph/node.ts";
import type { RunId, ThreadId } from "../ids.ts";
import type { Serializer } from "../serde.ts";
import type { RejectedAnswer, RunPathEntry } from "../types.ts";

/** Where a run is: the fields an interrupt row of one of its tasks is stamped with. */
export interface RunPlace {
  readonly threadId: ThreadId;
  readonly runId: RunId;
  readonly stream: StreamKey;
  readonly namespace: string[];
  /** Run-tree path of the parent tasks, root first (empty for a root run). */
  readonly path: RunPathEntry[];
  readonly graphName: string;
  readonly tenant: string | null;
  /** The call's clock (the session's): what interrupt rows are stamped with. */
  readonly clock: () => Date;
}

/** The run an `interrupt()` call is made in: its place, its store's serializer, its policies. */
export interface InterruptScope extends RunPlace {
  /** False when the graph has no checkpointer: interrupts need one. */
  readonly durable: boolean;
  readonly serializer: Serializer;
  readonly determinism: DeterminismMode;
  /** Who started the root run: the requester an approval policy's `notRequester` refers to. */
  readonly requester: string | null;
  /** The root graph's default approvers, for questions raised without their own. */
  readonly approvers?: ApproversSpec | undefined;
  /** Emits a `debug` event. */
  debug(message: string, data?: Record<string, unknown>): void;
  /** Records that an answer was rejected on re-run (reported in the call's result). */
  rejectAnswer(rejected: RejectedAnswer): void;
}
