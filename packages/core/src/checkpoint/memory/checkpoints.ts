/**
 * Checkpoints, channel blobs and task results of {@link MemorySaver}. Each function encodes its
 * values before it changes anything, so a value the serializer refuses writes nothing.
 */
import { NotFoundError } from "../../errors.ts";
import { validateThreadId, type CheckpointId, type ThreadId } from "../../ids.ts";
import {
  conflictError,
  insertSorted,
  lowerBound,
  rebuildChannelValue,
  sameHead,
} from "../store-kit.ts";
import type {
  CheckpointRecord,
  StepCommit,
  StreamKey,
  TaskOutcome,
  TaskResult,
  TaskResultKind,
} from "../types.ts";
import { releaseFencedLease } from "./leases.ts";
import type { MemoryTables, StoredBlob } from "./tables.ts";

/** Commits one step: everything the commit carries, or (on a conflict) nothing. */
export function commitStep(db: MemoryTables, commit: StepCommit): void {
  const { checkpoint } = commit;
  validateThreadId(checkpoint.threadId);
  db.fence(commit.fence);
  const existing = db.peekStream(checkpoint.threadId, checkpoint.stream);
  const head = existing?.head ?? null;
  if (head !== commit.expectedHeadId || existing?.checkpoints.has(checkpoint.id)) {
    throw conflictError(checkpoint, commit.expectedHeadId, head);
  }
  const data = db.encode(checkpoint);
  const blobs = commit.blobs.map((blob) => ({
    channel: blob.channel,
    version: blob.version,
    stored: { kind: blob.kind, prev: blob.prev, value: db.encode(blob.value) },
  }));
  const interrupts = (commit.interrupts ?? []).map((row) => db.interrupts.encode(row));
  const runs = (commit.runs ?? []).map((run) => ({ run, data: db.encode(run) }));
  const tasks = (commit.taskResults ?? []).map(({ checkpointId, result }) => ({
    checkpointId,
    taskId: result.taskId,
    task: { kind: result.kind, data: db.encode(result) },
  }));
  const thread = commit.thread ? db.encodeThread(commit.thread) : undefined;
  const audit = (commit.audit ?? []).map((record) => db.encodeAudit(record));

  const stream = existing ?? db.stream(checkpoint.threadId, checkpoint.stream);
  stream.checkpoints.set(checkpoint.id, data);
  insertSorted(stream.order, checkpoint.id);
  stream.head = checkpoint.id;
  for (const blob of blobs) {
    let versions = stream.blobs.get(blob.channel);
    if (!versions) stream.blobs.set(blob.channel, (versions = new Map<string, StoredBlob>()));
    // Versions are immutable once written: the first write of a version wins.
    if (!versions.has(blob.version)) versions.set(blob.version, blob.stored);
  }
  for (const row of interrupts) db.interrupts.store(row);
  for (const { run, data: runData } of runs) db.storeRun(run, runData);
  for (const { checkpointId, taskId, task } of tasks)
    db.storeTask(stream, checkpointId, taskId, task);
  if (thread) db.storeThread(thread);
  for (const line of audit) db.storeAudit(line.threadId, line.data);
  if (commit.releaseLease) releaseFencedLease(db, commit.fence);
}

/** The checkpoint `id` of the stream, or its head. */
export function getCheckpoint(
  db: MemoryTables,
  threadId: ThreadId,
  stream: StreamKey,
  id?: CheckpointId,
): CheckpointRecord | undefined {
  const state = db.peekStream(threadId, stream);
  const key = id ?? state?.head;
  const data = key === undefined || key === null ? undefined : state?.checkpoints.get(key);
  return data === undefined ? undefined : db.decode<CheckpointRecord>(data);
}

/** The head checkpoint of a stream: `known` itself when it is still the head, else decoded. */
export function headCheckpoint(
  db: MemoryTables,
  threadId: ThreadId,
  stream: StreamKey,
  known: CheckpointRecord | undefined,
): CheckpointRecord | undefined {
  const head = db.peekStream(threadId, stream)?.head;
  if (known !== undefined && sameHead(known, head, threadId, stream)) return known;
  return getCheckpoint(db, threadId, stream);
}

/** Checkpoints of a stream, newest first, from the sorted id list (no scan past the page). */
export function listCheckpoints(
  db: MemoryTables,
  threadId: ThreadId,
  stream: StreamKey,
  options: { limit?: number; before?: CheckpointId },
): CheckpointRecord[] {
  const state = db.peekStream(threadId, stream);
  if (!state) return [];
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const end =
    options.before === undefined ? state.order.length : lowerBound(state.order, options.before);
  const out: CheckpointRecord[] = [];
  for (let i = end - 1; i >= 0 && out.length < limit; i -= 1) {
    const data = state.checkpoints.get(state.order[i] as CheckpointId);
    if (data !== undefined) out.push(db.decode<CheckpointRecord>(data));
  }
  return out;
}

/** Values of the given channel versions, each chain walked from the version to its full blob. */
export function getChannelValues(
  db: MemoryTables,
  threadId: ThreadId,
  stream: StreamKey,
  versions: Record<string, string>,
): Record<string, unknown> {
  const state = db.peekStream(threadId, stream);
  const out: Record<string, unknown> = {};
  for (const [channel, version] of Object.entries(versions)) {
    const stored = state?.blobs.get(channel);
    // Walk newest → oldest, then rebuild oldest → newest.
    const chain: { kind: "full" | "delta"; value: unknown }[] = [];
    let current: string | null = version;
    while (current !== null) {
      const blob: StoredBlob | undefined = stored?.get(current);
      if (!blob) throw new NotFoundError("Channel version", `${channel}@${current}`);
      chain.push({ kind: blob.kind, value: db.decode(blob.value) });
      current = blob.kind === "delta" ? blob.prev : null;
    }
    out[channel] = rebuildChannelValue(channel, chain.reverse());
  }
  return out;
}

/** Records a task outcome with its interrupts, unless the task has a `writes` result. */
export function putTaskOutcome(db: MemoryTables, outcome: TaskOutcome): void {
  db.fence(outcome.fence);
  const stream = db.peekStream(outcome.threadId, outcome.stream);
  const prior = stream?.tasks.get(outcome.checkpointId)?.get(outcome.result.taskId);
  if (prior?.kind === "writes") {
    if (outcome.releaseLease) releaseFencedLease(db, outcome.fence);
    return;
  }
  const task = { kind: outcome.result.kind, data: db.encode(outcome.result) };
  const rows = outcome.interrupts.map((row) => db.interrupts.encode(row));
  const runs = (outcome.runs ?? []).map((run) => ({ run, data: db.encode(run) }));

  const state = stream ?? db.stream(outcome.threadId, outcome.stream);
  db.storeTask(state, outcome.checkpointId, outcome.result.taskId, task);
  for (const row of rows) db.interrupts.store(row);
  db.interrupts.supersede(outcome.superseded);
  for (const { run, data } of runs) db.storeRun(run, data);
  if (outcome.releaseLease) releaseFencedLease(db, outcome.fence);
}

/** Results of the tasks of the step that starts at `checkpointId`, in the order first stored. */
export function getTaskResults(
  db: MemoryTables,
  threadId: ThreadId,
  stream: StreamKey,
  checkpointId: CheckpointId,
): TaskResult[] {
  const tasks = db.peekStream(threadId, stream)?.tasks.get(checkpointId);
  return tasks ? [...tasks.values()].map((task) => db.decode<TaskResult>(task.data)) : [];
}

/** The kind of each result of a step, in the order first stored (no body is decoded). */
export function getTaskResultKinds(
  db: MemoryTables,
  threadId: ThreadId,
  stream: StreamKey,
  checkpointId: CheckpointId,
): TaskResultKind[] {
  const tasks = db.peekStream(threadId, stream)?.tasks.get(checkpointId);
  return tasks ? [...tasks].map(([taskId, task]) => ({ taskId, kind: task.kind })) : [];
}
