/**
 * Target selection: which pending interrupts a resume command (optionally narrowed to a target)
 * answers, and the errors for a target that is stale, matches nothing or is ambiguous.
 */
import type { StoredInterrupt } from "../checkpoint/types.ts";
import {
  AmbiguousResumeError,
  InvalidInputError,
  NoMatchingTargetError,
  NotFoundError,
  StaleTargetError,
} from "../errors.ts";
import type { ResumeCommand, ResumeTarget } from "../graph/command.ts";
import { asInterruptId, asRunId } from "../ids.ts";
import { toPublicInterrupt } from "../interrupts/records.ts";
import { ROOT_STREAM } from "../keys.ts";
import type { ThreadSession } from "../thread/session.ts";

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
  session: ThreadSession,
  runId: string | null,
  reason: string,
): Promise<StaleTargetError> {
  const threadId = session.threadId;
  const run = runId ? await session.run(asRunId(runId)) : undefined;
  const head = await session.head(run?.stream ?? ROOT_STREAM);
  const pending = await session.pending();
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
export async function unmatchedTarget(
  session: ThreadSession,
  target: ResumeTarget,
  allPending: () => Promise<readonly StoredInterrupt[]>,
): Promise<StaleTargetError | NoMatchingTargetError> {
  const threadId = session.threadId;
  const asked = selectTarget(await session.interruptsOfRun(asRunId(target.runId)), target);
  const statuses = [...new Set(asked.map((i) => i.status))].join("/");
  if (asked.length > 0) {
    const what =
      target.interruptId !== undefined
        ? `Interrupt ${target.interruptId} is ${statuses}, not pending.`
        : target.taskId !== undefined
          ? `Task ${target.taskId} has no pending interrupt (its interrupts are ${statuses}).`
          : `Run ${target.runId} has no pending interrupt at [${target.namespace.join(", ")}] (they are ${statuses}).`;
    return staleError(session, target.runId, what);
  }
  const latest = await staleError(session, target.runId, ROOT_STREAM);
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
  session: ThreadSession,
  command: ResumeCommand,
  inScope: readonly StoredInterrupt[],
  allPending: () => Promise<readonly StoredInterrupt[]>,
  target: ResumeTarget | null,
): Promise<ChosenAnswers> {
  const { store, threadId } = session;
  const chosen: ChosenAnswers = new Map();
  if (command.kind === "resume") {
    if (inScope.length === 0) {
      if (target) throw await unmatchedTarget(session, target, allPending);
      if (!(await threadExists(session))) throw new NotFoundError("thread", threadId);
      throw await staleError(session, null, "No interrupt is pending in this scope.");
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
      missing.length === 1
        ? (await store.getInterrupts([asInterruptId(missing[0])]))[0]
        : undefined;
    if (!record && !target && !(await threadExists(session)))
      throw new NotFoundError("thread", threadId);
    const why = record
      ? `Interrupt ${record.id} is ${record.status}, not pending.`
      : `Unknown or non-pending interrupt id(s): ${missing.join(", ")}.`;
    throw await staleError(session, target?.runId ?? record?.runId ?? null, why);
  }
  for (const [id, value] of entries) chosen.set(byId.get(id) as StoredInterrupt, value);
  return chosen;
}

/** Whether the session's thread was created: its row, read with the root head. */
async function threadExists(session: ThreadSession): Promise<boolean> {
  return (await session.store.getThreadHead(session.threadId, ROOT_STREAM)).thread !== undefined;
}
