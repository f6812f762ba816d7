/**
 * Turning a resume command into an atomic batch of answers: which pending interrupts it targets,
 * that the answers fit their schemas, which tasks it wakes, and what a lost race looks like.
 */
import type { AnswerBatch, Checkpointer, StoredInterrupt, TaskRef } from "../checkpoint/types.ts";
import {
  AmbiguousResumeError,
  InvalidInputError,
  NoMatchingTargetError,
  NotFoundError,
  StaleTargetError,
} from "../errors.ts";
import type { CheckpointId, InterruptId, RunId, TaskId, ThreadId } from "../ids.ts";
import type { ResumeCommand } from "../graph/command.ts";
import { checkAnswer } from "./answer-schemas.ts";
import { toPublicInterrupt } from "./interrupt-records.ts";
import { interruptsOfRun } from "./run.ts";

/**
 * What a targeted resume or steer addresses: the pending interrupts owned by run `runId` at
 * exactly `namespace`, narrowed by `taskId` and `interruptId`.
 */
export interface ResumeTarget {
  runId: RunId | string;
  namespace: readonly string[];
  taskId?: TaskId | string;
  interruptId?: InterruptId | string;
  /** Refuse unless this checkpoint is still the head of the run's stream. */
  expectedCheckpointId?: CheckpointId | string;
}

/** The interrupts a target selects among `pending`. */
export function selectTarget(
  pending: readonly StoredInterrupt[],
  target: ResumeTarget | null,
): StoredInterrupt[] {
  if (!target) return [...pending];
  return pending.filter(
    (i) =>
      i.runId === target.runId &&
      sameNamespace(i.namespace, target.namespace) &&
      (target.taskId === undefined || i.taskId === target.taskId) &&
      (target.interruptId === undefined || i.id === target.interruptId),
  );
}

function sameNamespace(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((segment, i) => segment === b[i]);
}

/** The latest metadata of a thread, carried by {@link StaleTargetError}. */
export async function staleError(
  saver: Checkpointer,
  threadId: ThreadId,
  runId: string | null,
  reason: string,
  stream = "",
): Promise<StaleTargetError> {
  const run = runId ? await saver.getRun(runId as RunId) : undefined;
  const head = await saver.getCheckpoint(threadId, run?.stream ?? stream);
  const pending = await saver.getThreadInterrupts(threadId, "pending");
  return new StaleTargetError(
    `${reason} Nothing was applied; re-read the pending interrupts and decide again.`,
    {
      threadId,
      runId: run?.runId ?? runId,
      runStatus: run?.status ?? null,
      headCheckpointId: head?.id ?? null,
      pendingInterrupts: pending.map(toPublicInterrupt),
      reason,
    },
  );
}

/**
 * The error for a target that selects no pending interrupt. Its class depends on the target only,
 * never on what else is pending: a target naming an interrupt, a task or a scope whose questions
 * were already answered (or cancelled, superseded) is stale; one naming nothing its run ever asked
 * matches nothing. Both carry the latest metadata.
 */
async function unmatchedTarget(
  saver: Checkpointer,
  threadId: ThreadId,
  target: ResumeTarget,
  allPending: () => Promise<readonly StoredInterrupt[]>,
): Promise<StaleTargetError | NoMatchingTargetError> {
  const asked = selectTarget(await interruptsOfRun(saver, threadId, target.runId as RunId), target);
  const statuses = [...new Set(asked.map((i) => i.status))].join("/");
  if (asked.length > 0) {
    const what =
      target.interruptId !== undefined
        ? `Interrupt ${target.interruptId} is ${statuses}, not pending.`
        : target.taskId !== undefined
          ? `Task ${target.taskId} has no pending interrupt (its interrupts are ${statuses}).`
          : `Run ${target.runId} has no pending interrupt at [${target.namespace.join(", ")}] (they are ${statuses}).`;
    return staleError(saver, threadId, target.runId, what);
  }
  const latest = await staleError(saver, threadId, target.runId, "");
  const pending = await allPending();
  return new NoMatchingTargetError(
    "The target matches no interrupt its run asked; pick one of those pending.",
    {
      target,
      pending: pending.map(toPublicInterrupt),
      threadId,
      runId: latest.details.runId,
      runStatus: latest.details.runStatus,
      headCheckpointId: latest.details.headCheckpointId,
    },
  );
}

/** Answers chosen by a command: interrupt → value. */
export type ChosenAnswers = Map<StoredInterrupt, unknown>;

/**
 * Picks the interrupts a command answers among those in scope.
 *
 * `allPending` loads the thread's pending interrupts, read only to report a target that matches
 * none of them.
 *
 * @throws StaleTargetError when nothing is pending, or a resumeMap id is unknown or not pending.
 * @throws AmbiguousResumeError when `Command.resume(value)` has several interrupts in scope.
 */
export async function chooseAnswers(
  saver: Checkpointer,
  threadId: ThreadId,
  command: ResumeCommand,
  inScope: readonly StoredInterrupt[],
  allPending: () => Promise<readonly StoredInterrupt[]>,
  target: ResumeTarget | null,
): Promise<ChosenAnswers> {
  const chosen: ChosenAnswers = new Map();
  if (command.kind === "resume") {
    if (inScope.length === 0) {
      if (target) throw await unmatchedTarget(saver, threadId, target, allPending);
      if (!(await saver.getThread(threadId))) throw new NotFoundError("thread", threadId);
      throw await staleError(saver, threadId, null, "No interrupt is pending in this scope.");
    }
    if (inScope.length > 1) throw new AmbiguousResumeError(inScope.map(toPublicInterrupt));
    chosen.set(inScope[0] as StoredInterrupt, command.value);
    return chosen;
  }
  const byId = new Map(inScope.map((i) => [i.id as string, i]));
  const entries = Object.entries(command.map);
  if (entries.length === 0)
    throw new InvalidInputError(
      "Command.resumeMap({}) answers nothing; give at least one interrupt id.",
    );
  const missing = entries.map(([id]) => id).filter((id) => !byId.has(id));
  if (missing.length > 0) {
    const record =
      missing.length === 1 ? await saver.getInterrupt(missing[0] as InterruptId) : undefined;
    if (!record && !target && !(await saver.getThread(threadId)))
      throw new NotFoundError("thread", threadId);
    const why = record
      ? `Interrupt ${record.id} is ${record.status}, not pending.`
      : `Unknown or non-pending interrupt id(s): ${missing.join(", ")}.`;
    throw await staleError(saver, threadId, target?.runId ?? record?.runId ?? null, why);
  }
  for (const [id, value] of entries) chosen.set(byId.get(id) as StoredInterrupt, value);
  return chosen;
}

/**
 * Checks each answer with its interrupt's real schema where this process knows it, else with the
 * stored JSON Schema (see `answer-schemas.ts`).
 *
 * @throws InvalidAnswerError listing the schema errors; nothing is stored.
 */
export async function validateAnswers(chosen: ChosenAnswers): Promise<void> {
  for (const [record, value] of chosen) await checkAnswer(record, value);
}

/**
 * Tasks an answer wakes: the interrupt's own task and every ancestor task on its run-tree path
 * (a parent task whose child run paused), each at the head of its stream.
 */
export async function tasksToWake(
  saver: Checkpointer,
  records: readonly StoredInterrupt[],
): Promise<TaskRef[]> {
  const refs = new Map<string, TaskRef>();
  const heads = new Map<string, CheckpointId | null>();
  const headOf = async (threadId: ThreadId, stream: string): Promise<CheckpointId | null> => {
    if (!heads.has(stream))
      heads.set(stream, (await saver.getCheckpoint(threadId, stream))?.id ?? null);
    return heads.get(stream) ?? null;
  };
  for (const record of records) {
    if (record.kind !== "after")
      refs.set(`${record.stream}|${record.taskId}`, {
        stream: record.stream,
        checkpointId: record.checkpointId,
        taskId: record.taskId,
      });
    for (const entry of record.path.slice(0, -1)) {
      const run = await saver.getRun(entry.runId);
      if (!run) continue;
      const head = await headOf(record.threadId, run.stream);
      if (head)
        refs.set(`${run.stream}|${entry.taskId}`, {
          stream: run.stream,
          checkpointId: head,
          taskId: entry.taskId,
        });
    }
  }
  return [...refs.values()];
}

/** Builds the atomic batch for chosen answers (plus cancellations). */
export function buildBatch(
  threadId: ThreadId,
  chosen: ChosenAnswers,
  cancel: readonly StoredInterrupt[],
  wake: TaskRef[],
  actor: string,
  requestId: string | undefined,
  expectedHead: AnswerBatch["expectedHead"],
): AnswerBatch {
  return {
    threadId,
    answers: [...chosen].map(([record, value]) => ({
      id: record.id,
      value: value === undefined ? null : value,
    })),
    cancel: cancel.map((c) => c.id),
    wake,
    actor,
    action: "answer",
    requestId: requestId ?? null,
    expectedHead: expectedHead ?? null,
  };
}
