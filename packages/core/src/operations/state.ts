/**
 * Reading and editing a thread's state: the current snapshot (optionally with child runs), the
 * checkpoint history, and `updateState` (a new checkpoint, a fork when not at the head).
 */
import { requireCapability } from "../checkpoint/capabilities.ts";
import type { CheckpointRecord, StoredInterrupt } from "../checkpoint/types.ts";
import { applyWrites, scheduleNext } from "../engine/barrier.ts";
import { InvalidInputError, NotFoundError, ThreadInterruptedError } from "../errors.ts";
import { END, START, type GraphDefinition } from "../graph/definition.ts";
import {
  asCheckpointId,
  newCheckpointId,
  newRunId,
  type CheckpointId,
  type RunId,
  type TaskId,
} from "../ids.ts";
import { toPublicInterrupt } from "../interrupts/records.ts";
import { ROOT_STREAM } from "../keys.ts";
import type { Interrupt, RunStatus, SteeringRecord } from "../types.ts";
import type { ThreadSession } from "../thread/session.ts";

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
  session: ThreadSession,
  checkpoint: CheckpointRecord,
  interrupts: readonly StoredInterrupt[],
): Promise<TaskSnapshot[]> {
  const results = new Map(
    (await session.store.getTaskResults(checkpoint.threadId, checkpoint.stream, checkpoint.id)).map(
      (r) => [r.taskId as string, r],
    ),
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
  definition: GraphDefinition,
  session: ThreadSession,
  checkpoint: CheckpointRecord,
  interrupts: readonly StoredInterrupt[],
  steering: readonly SteeringRecord[],
  isHead: boolean,
): Promise<StateSnapshot> {
  return {
    values: await session.values(definition.schema, checkpoint),
    next: checkpoint.next.map((t) => t.node),
    tasks: await tasksOf(session, checkpoint, interrupts),
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
  definition: GraphDefinition,
  session: ThreadSession,
  checkpointId: string | undefined,
  subgraphs: boolean,
): Promise<StateSnapshot> {
  const checkpoint = await session.head(
    ROOT_STREAM,
    checkpointId === undefined ? undefined : asCheckpointId(checkpointId),
  );
  const interrupts = await session.interrupts();
  const steering = await session.steering();
  if (!checkpoint) {
    if (checkpointId) throw new NotFoundError("checkpoint", checkpointId);
    return {
      values: await session.values(definition.schema, undefined),
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
    definition,
    session,
    checkpoint,
    interrupts,
    steering,
    checkpointId === undefined,
  );
  if (subgraphs) snapshot.subgraphs = await childSnapshots(session, interrupts);
  return snapshot;
}

async function childSnapshots(
  session: ThreadSession,
  interrupts: readonly StoredInterrupt[],
): Promise<ChildSnapshot[]> {
  const history = requireCapability(session.store, "threadHistory", "getState({ subgraphs })");
  const runs = (await history.listRuns(session.threadId)).filter((r) => r.parentRunId !== null);
  const out: ChildSnapshot[] = [];
  for (const run of runs) {
    const head = await session.head(run.stream);
    out.push({
      runId: run.runId,
      graph: run.graph,
      subAgentId: `${run.graph}:${run.runId}`,
      namespace: run.namespace,
      status: run.status,
      parentRunId: run.parentRunId,
      parentTaskId: run.parentTaskId,
      values: head
        ? await history.getChannelValues(session.threadId, run.stream, head.versions)
        : {},
      tasks: head ? await tasksOf(session, head, interrupts) : [],
      checkpointId: head?.id ?? null,
    });
  }
  return out;
}

/**
 * Checkpoints of a thread's root stream, newest first, with their interrupts and steering.
 *
 * @throws InvalidInputError when `before` is not a checkpoint of the thread's root stream.
 */
export async function getStateHistory(
  definition: GraphDefinition,
  session: ThreadSession,
  options: { limit?: number; before?: string },
): Promise<StateSnapshot[]> {
  const before = options.before ? asCheckpointId(options.before) : undefined;
  const [checkpoints, cursor] = await Promise.all([
    requireCapability(session.store, "threadHistory", "getStateHistory").listCheckpoints(
      session.threadId,
      ROOT_STREAM,
      {
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
        ...(before !== undefined ? { before } : {}),
      },
    ),
    before === undefined
      ? null
      : session.store.getCheckpoint(session.threadId, ROOT_STREAM, before),
  ]);
  // A cursor that is no checkpoint of this thread would page from an arbitrary point (ids
  // compare as text), which reads as a restart from the first page: refuse it.
  if (before !== undefined && !cursor)
    throw new InvalidInputError(
      `History cursor "${before.slice(0, 100)}" is not a checkpoint of thread ${session.threadId}; pass the checkpointId of an item of the previous page, or omit it for the newest.`,
      { before, threadId: session.threadId },
    );
  const interrupts = await session.interrupts();
  const steering = await session.steering();
  const out: StateSnapshot[] = [];
  for (const checkpoint of checkpoints) {
    const snapshot = await snapshotOf(definition, session, checkpoint, interrupts, steering, false);
    // History shows every interrupt raised at the checkpoint, whatever became of it.
    snapshot.interrupts = interrupts
      .filter((i) => i.checkpointId === checkpoint.id && i.stream === ROOT_STREAM)
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
  definition: GraphDefinition,
  session: ThreadSession,
  values: Record<string, unknown>,
  checkpointId: string | undefined,
  asNode: string | undefined,
): Promise<{ checkpointId: CheckpointId }> {
  const { threadId } = session;
  if (asNode !== undefined && asNode !== START && !definition.nodes.has(asNode))
    throw new InvalidInputError(`asNode "${asNode}" is not a node of this graph.`, { asNode });
  const pending = await session.pending();
  if (pending.length > 0 && checkpointId === undefined)
    throw new ThreadInterruptedError(threadId, pending.map(toPublicInterrupt));
  const head = await session.head();
  const base = checkpointId ? await session.head(ROOT_STREAM, asCheckpointId(checkpointId)) : head;
  if (checkpointId && !base) throw new NotFoundError("checkpoint", checkpointId);
  const runId = newRunId();
  const id = newCheckpointId(head?.id ?? null);
  const node = asNode ?? START;
  const writes = Object.entries(values).filter(([, v]) => v !== undefined);
  const barrier = applyWrites(
    definition,
    await session.values(definition.schema, base),
    base ? { ...base.versions } : {},
    [{ kind: "writes", taskId: "update" as TaskId, node, writes, gotos: [], sends: [] }],
    id,
  );
  const step = base ? base.step + 1 : -1;
  const next =
    node === END
      ? []
      : await scheduleNext(
          definition,
          { threadId, runId, namespace: [] },
          [node],
          barrier.values,
          step + 1,
        );
  const now = session.now();
  const audited = { asNode: node, checkpointId: id, keys: Object.keys(values) };
  await session.store.commitStep({
    checkpoint: {
      threadId,
      stream: ROOT_STREAM,
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
    // The line is written with the state it describes, in the commit's transaction.
    audit: [session.auditLine({ runId, action: "update_state", data: audited })],
    runs: [
      {
        runId,
        threadId,
        parentRunId: null,
        parentTaskId: null,
        graph: definition.name,
        namespace: [],
        stream: ROOT_STREAM,
        status: next.length === 0 ? "done" : "interrupted",
        createdAt: now,
        updatedAt: now,
        error: null,
        options: null,
      },
    ],
  });
  return { checkpointId: id };
}
