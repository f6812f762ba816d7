/**
 * Reading and editing a thread's state: the current snapshot (optionally with child runs), the
 * checkpoint history, and `updateState` (a new checkpoint, a fork when not at the head).
 */
import { randomUUID } from "node:crypto";
import type { Checkpointer, CheckpointRecord, StoredInterrupt } from "../checkpoint/types.ts";
import { InvalidInputError, NotFoundError, ThreadInterruptedError } from "../errors.ts";
import {
  newCheckpointId,
  newRunId,
  type CheckpointId,
  type RunId,
  type TaskId,
  type ThreadId,
} from "../ids.ts";
import { END, START } from "../graph/state-graph.ts";
import type { Interrupt, RunStatus, SteeringRecord } from "../types.ts";
import { applyWrites, scheduleNext } from "./barrier.ts";
import { Execution } from "./execution.ts";
import { silentSink } from "./events.ts";
import { toPublicInterrupt } from "./interrupt-records.ts";
import { loadValues, type GraphRuntime } from "./run.ts";

/** One task of a snapshot's next step. */
export interface TaskSnapshot {
  id: TaskId;
  node: string;
  /** `done`: its writes wait for the step's barrier; `paused`: waits for an answer. */
  status: "pending" | "done" | "paused";
  interrupts: Interrupt[];
}

/** The state of a child run inside a snapshot. */
export interface ChildSnapshot {
  runId: RunId;
  graph: string;
  /** Sub-agent id: the child graph's name plus its run id. */
  subAgentId: string;
  namespace: string[];
  status: RunStatus;
  parentRunId: RunId | null;
  parentTaskId: TaskId | null;
  values: Record<string, unknown>;
  tasks: TaskSnapshot[];
  checkpointId: CheckpointId | null;
}

/** A thread's state at one checkpoint. */
export interface StateSnapshot<Values = Record<string, unknown>> {
  values: Values;
  /** Nodes of the next step (empty when finished). */
  next: string[];
  tasks: TaskSnapshot[];
  /** Pending interrupts at this checkpoint (all streams when it is the head). */
  interrupts: Interrupt[];
  checkpointId: CheckpointId | null;
  parentCheckpointId: CheckpointId | null;
  runId: RunId | null;
  step: number;
  source: CheckpointRecord["source"] | null;
  createdAt: string | null;
  metadata: Record<string, unknown>;
  /** Steering records attached to this checkpoint. */
  steering: SteeringRecord[];
  /** Child runs (with `{ subgraphs: true }`). */
  subgraphs?: ChildSnapshot[];
}

async function tasksOf(
  saver: Checkpointer,
  checkpoint: CheckpointRecord,
  interrupts: readonly StoredInterrupt[],
): Promise<TaskSnapshot[]> {
  const results = new Map(
    (await saver.getTaskResults(checkpoint.threadId, checkpoint.stream, checkpoint.id)).map((r) => [
      r.taskId as string,
      r,
    ]),
  );
  return checkpoint.next.map((task) => {
    const result = results.get(task.id);
    return {
      id: task.id,
      node: task.node,
      status: result?.kind === "writes" ? "done" : result?.kind === "paused" ? "paused" : "pending",
      interrupts: interrupts
        .filter((i) => i.taskId === task.id && i.checkpointId === checkpoint.id)
        .map(toPublicInterrupt),
    };
  });
}

async function snapshotOf(
  runtime: GraphRuntime,
  saver: Checkpointer,
  checkpoint: CheckpointRecord,
  interrupts: readonly StoredInterrupt[],
  steering: readonly SteeringRecord[],
  isHead: boolean,
): Promise<StateSnapshot> {
  return {
    values: await loadValues(saver, runtime.shape, checkpoint),
    next: checkpoint.next.map((t) => t.node),
    tasks: await tasksOf(saver, checkpoint, interrupts),
    interrupts: interrupts
      .filter((i) => i.status === "pending" && (isHead || i.checkpointId === checkpoint.id))
      .map(toPublicInterrupt),
    checkpointId: checkpoint.id,
    parentCheckpointId: checkpoint.parentId,
    runId: checkpoint.runId,
    step: checkpoint.step,
    source: checkpoint.source,
    createdAt: checkpoint.createdAt,
    metadata: checkpoint.metadata,
    steering: steering.filter((s) => s.checkpointId === checkpoint.id),
  };
}

/** The state of a thread at its head (or at `checkpointId`). */
export async function getState(
  runtime: GraphRuntime,
  saver: Checkpointer,
  threadId: ThreadId,
  checkpointId: string | undefined,
  subgraphs: boolean,
): Promise<StateSnapshot> {
  const checkpoint = await saver.getCheckpoint(
    threadId,
    "",
    checkpointId as CheckpointId | undefined,
  );
  const interrupts = await saver.getThreadInterrupts(threadId);
  const steering = await saver.listSteering(threadId);
  if (!checkpoint) {
    if (checkpointId) throw new NotFoundError("checkpoint", checkpointId);
    return {
      values: await loadValues(saver, runtime.shape, undefined),
      next: [],
      tasks: [],
      interrupts: [],
      checkpointId: null,
      parentCheckpointId: null,
      runId: null,
      step: -1,
      source: null,
      createdAt: null,
      metadata: {},
      steering: [],
    };
  }
  const snapshot = await snapshotOf(
    runtime,
    saver,
    checkpoint,
    interrupts,
    steering,
    checkpointId === undefined,
  );
  if (subgraphs) snapshot.subgraphs = await childSnapshots(saver, threadId, interrupts);
  return snapshot;
}

async function childSnapshots(
  saver: Checkpointer,
  threadId: ThreadId,
  interrupts: readonly StoredInterrupt[],
): Promise<ChildSnapshot[]> {
  const runs = (await saver.listRuns(threadId)).filter((r) => r.parentRunId !== null);
  const out: ChildSnapshot[] = [];
  for (const run of runs) {
    const head = await saver.getCheckpoint(threadId, run.stream);
    out.push({
      runId: run.runId,
      graph: run.graph,
      subAgentId: `${run.graph}:${run.runId}`,
      namespace: run.namespace,
      status: run.status,
      parentRunId: run.parentRunId,
      parentTaskId: run.parentTaskId,
      values: head ? await saver.getChannelValues(threadId, run.stream, head.versions) : {},
      tasks: head ? await tasksOf(saver, head, interrupts) : [],
      checkpointId: head?.id ?? null,
    });
  }
  return out;
}

/** Checkpoints of a thread's root stream, newest first, with their interrupts and steering. */
export async function getStateHistory(
  runtime: GraphRuntime,
  saver: Checkpointer,
  threadId: ThreadId,
  options: { limit?: number; before?: string },
): Promise<StateSnapshot[]> {
  const checkpoints = await saver.listCheckpoints(threadId, "", {
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
    ...(options.before ? { before: options.before as CheckpointId } : {}),
  });
  const interrupts = await saver.getThreadInterrupts(threadId);
  const steering = await saver.listSteering(threadId);
  const out: StateSnapshot[] = [];
  for (const checkpoint of checkpoints) {
    const snapshot = await snapshotOf(runtime, saver, checkpoint, interrupts, steering, false);
    // History shows every interrupt raised at the checkpoint, whatever became of it.
    snapshot.interrupts = interrupts
      .filter((i) => i.checkpointId === checkpoint.id && i.stream === "")
      .map(toPublicInterrupt);
    out.push(snapshot);
  }
  return out;
}

/**
 * Applies `values` as node `asNode` would (default: as input) on top of the head or of
 * `checkpointId` (a fork), committing a new checkpoint whose next tasks follow `asNode`'s edges.
 *
 * @throws ThreadInterruptedError when the thread waits on interrupts (answer or cancel them first).
 */
export async function updateState(
  runtime: GraphRuntime,
  saver: Checkpointer,
  threadId: ThreadId,
  values: Record<string, unknown>,
  checkpointId: string | undefined,
  asNode: string | undefined,
  actor: string,
): Promise<{ checkpointId: CheckpointId }> {
  if (asNode !== undefined && asNode !== START && !runtime.shape.nodes.has(asNode))
    throw new InvalidInputError(`asNode "${asNode}" is not a node of this graph.`, { asNode });
  const pending = await saver.getThreadInterrupts(threadId, "pending");
  if (pending.length > 0 && checkpointId === undefined)
    throw new ThreadInterruptedError(threadId, pending.map(toPublicInterrupt));
  const head = await saver.getCheckpoint(threadId, "");
  const base = checkpointId
    ? await saver.getCheckpoint(threadId, "", checkpointId as CheckpointId)
    : head;
  if (checkpointId && !base) throw new NotFoundError("checkpoint", checkpointId);
  const runId = newRunId();
  const exec = new Execution({
    threadId,
    runId,
    stream: "",
    namespace: [],
    path: [],
    graphName: runtime.name,
    schema: runtime.shape.schema,
    tenant: null,
    saver,
    durable: true,
    determinism: "strict",
    signal: new AbortController().signal,
    sink: silentSink,
    steering: [],
    lineage: [runId],
    runSelectors: { before: [], after: [] },
  });
  const id = newCheckpointId(head?.id ?? null);
  const current = await loadValues(saver, runtime.shape, base);
  const node = asNode ?? START;
  const writes = Object.entries(values).filter(([, v]) => v !== undefined);
  const barrier = applyWrites(
    runtime.shape,
    current,
    base ? { ...base.versions } : {},
    [{ kind: "writes", taskId: "update" as TaskId, node, writes, gotos: [], sends: [] }],
    id,
  );
  const step = base ? base.step + 1 : -1;
  const next =
    node === END ? [] : await scheduleNext(runtime.shape, exec, [node], barrier.values, step + 1);
  const now = new Date().toISOString();
  await saver.commitStep({
    checkpoint: {
      threadId,
      stream: "",
      id,
      parentId: base?.id ?? null,
      runId,
      step,
      versions: barrier.versions,
      next,
      source: checkpointId ? "fork" : "update",
      createdAt: now,
      metadata: { asNode: node, writes: Object.keys(values) },
    },
    expectedHeadId: head?.id ?? null,
    blobs: barrier.blobs,
    runs: [
      {
        runId,
        threadId,
        parentRunId: null,
        parentTaskId: null,
        graph: runtime.name,
        namespace: [],
        stream: "",
        status: next.length === 0 ? "done" : "interrupted",
        createdAt: now,
        updatedAt: now,
        error: null,
        options: null,
      },
    ],
  });
  await saver.appendAudit({
    id: `a_${randomUUID()}`,
    threadId,
    runId,
    action: "update_state",
    actor,
    data: { asNode: node, checkpointId: id, keys: Object.keys(values) },
    createdAt: now,
  });
  return { checkpointId: id };
}
