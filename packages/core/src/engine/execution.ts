/**
 * The environment of one run (root or child): the call's thread session, who the run is, where
 * its events go. Passed explicitly to everything that needs it — never a bag of magic keys.
 */
import type { Schema } from "../channels.ts";
import type { RuntimeStore, StreamKey } from "../checkpoint/types.ts";
import type { DeterminismMode, RunSelectors } from "../graph/definition.ts";
import type { RunId, ThreadId } from "../ids.ts";
import type { Serializer } from "../serde.ts";
import type { ApproversSpec } from "../graph/node.ts";
import type { InterruptScope } from "../interrupts/scope.ts";
import type { TracedRun } from "../telemetry/runtime-spans.ts";
import type { HeldLease } from "../thread/lease.ts";
import type { ThreadSession } from "../thread/session.ts";
import type { RejectedAnswer, RunPathEntry, SteeringRecord } from "../types.ts";
import type { TaskIdBasis } from "./barrier.ts";
import type { EventSink } from "./events.ts";

/**
 * A run's abort signal (the caller's, or the lease's when it is lost), made only when something
 * asks for it — node code's `ctx.signal`, a retry's wait — since most runs never do, and making
 * one shows in profiles of short calls. The loop asks {@link RunSignal.aborted} between steps.
 */
export interface RunSignal {
  /** Whether the run was aborted, without making the signal. */
  readonly aborted: boolean;
  /** The signal itself. */
  readonly signal: AbortSignal;
}

/** The {@link RunSignal} of a signal that already exists. */
export function runSignalOf(signal: AbortSignal): RunSignal {
  return {
    get aborted() {
      return signal.aborted;
    },
    signal,
  };
}

/** Fields of an {@link Execution}. */
export interface ExecutionInit {
  /** The call's thread session: store, thread, lease. Shared by the whole run tree. */
  session: ThreadSession;
  runId: RunId;
  stream: StreamKey;
  namespace: string[];
  /** Run-tree path of the parent tasks, root first (empty for a root run). */
  path: RunPathEntry[];
  graphName: string;
  /** State schema of the run's graph. */
  schema: Schema;
  tenant: string | null;
  determinism: DeterminismMode;
  /** Whether the run was aborted, and its abort signal, made when first asked for. */
  abort: RunSignal;
  sink: EventSink;
  /** Steering records of the thread (oldest first). */
  steering: SteeringRecord[];
  /** Run ids of this run and its ancestors. */
  lineage: RunId[];
  /** The root run's own static interrupt selectors (relative to the root), inherited by children. */
  runSelectors: RunSelectors;
  /** Answers the real schema rejected on re-run, shared by the whole run tree of one call. */
  rejectedAnswers?: RejectedAnswer[];
  /** Who started the root run: the requester an approval policy's `notRequester` refers to. */
  requester: string | null;
  /** The root graph's default approvers, for questions raised without their own. */
  approvers?: ApproversSpec | undefined;
}

/** The environment of one run; what interrupts, spans and task ids read of a run, it provides. */
export class Execution implements ExecutionInit, InterruptScope, TracedRun, TaskIdBasis {
  readonly session: ThreadSession;
  readonly runId: RunId;
  readonly stream: StreamKey;
  readonly namespace: string[];
  readonly path: RunPathEntry[];
  readonly graphName: string;
  readonly schema: Schema;
  readonly tenant: string | null;
  readonly determinism: DeterminismMode;
  readonly abort: RunSignal;
  readonly sink: EventSink;
  readonly steering: SteeringRecord[];
  readonly lineage: RunId[];
  readonly runSelectors: RunSelectors;
  readonly rejectedAnswers: RejectedAnswer[];
  readonly requester: string | null;
  readonly approvers?: ApproversSpec | undefined;

  constructor(init: ExecutionInit) {
    this.session = init.session;
    this.runId = init.runId;
    this.stream = init.stream;
    this.namespace = init.namespace;
    this.path = init.path;
    this.graphName = init.graphName;
    this.schema = init.schema;
    this.tenant = init.tenant;
    this.determinism = init.determinism;
    this.abort = init.abort;
    this.sink = init.sink;
    this.steering = init.steering;
    this.lineage = init.lineage;
    this.runSelectors = init.runSelectors;
    this.rejectedAnswers = init.rejectedAnswers ?? [];
    this.requester = init.requester;
    this.approvers = init.approvers;
  }

  /** The run's abort signal (made on first use, see {@link RunSignal}). */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** Whether the run was aborted: the caller's signal fired, or the lease was lost. */
  get aborted(): boolean {
    return this.abort.aborted;
  }

  /** Records that an answer was rejected on re-run (reported in the call's result). */
  rejectAnswer(rejected: RejectedAnswer): void {
    this.rejectedAnswers.push(rejected);
  }

  get threadId(): ThreadId {
    return this.session.threadId;
  }

  /** The session's clock: every record of the run is stamped by it. */
  get clock(): () => Date {
    return this.session.clock;
  }

  /** The store, fenced by the call's lease when it holds one. */
  get store(): RuntimeStore {
    return this.session.store;
  }

  /** False when the graph has no checkpointer: a private memory store backs the run. */
  get durable(): boolean {
    return this.session.durable;
  }

  /** The thread lease the call holds (absent without a checkpointer). */
  get lease(): HeldLease | undefined {
    return this.session.lease;
  }

  get serializer(): Serializer {
    return this.store.serializer;
  }

  /** Emits a `debug` event. */
  debug(message: string, data?: Record<string, unknown>): void {
    if (this.sink.wants("debug"))
      this.sink.push({
        type: "debug",
        namespace: [...this.namespace],
        message,
        ...(data ? { data } : {}),
      });
  }

  /** Steering records that target the task, this run or an ancestor run. */
  steeringFor(taskId: string): SteeringRecord[] {
    if (this.steering.length === 0) return [];
    return this.steering.filter((record) =>
      record.taskId !== undefined ? record.taskId === taskId : this.lineage.includes(record.runId),
    );
  }

  /** An execution for a child run of this one. */
  child(
    init: Pick<
      ExecutionInit,
      "runId" | "stream" | "namespace" | "path" | "graphName" | "determinism" | "schema"
    >,
  ): Execution {
    return new Execution({ ...this, ...init, lineage: [...this.lineage, init.runId] });
  }
}
