/**
 * Applying answers: request-id dedupe, targeting, the pendingChildren policy, schema checks, the
 * atomic answer batch and its steering. What comes out is either the result a duplicate request
 * already produced, or the options the caller continues the run with.
 */
import type { AnswerBatch, AnswerOutcome, StoredInterrupt, TaskRef } from "../checkpoint/types.ts";
import { isDeepStrictEqual } from "node:util";
import { approvalView, refusalText } from "../checkpoint/approvals.ts";
import {
  NoMatchingTargetError,
  NotAllowedError,
  NotFoundError,
  StaleTargetError,
} from "../errors.ts";
import type { ResumeCommand, ResumeTarget } from "../graph/command.ts";
import type { RunOptions } from "../graph/options.ts";
import { continuationAsk } from "../engine/continuation.ts";
import { asInterruptId, asRunId } from "../ids.ts";
import { checkAnswer } from "../interrupts/answer-schemas.ts";
import { ROOT_STREAM } from "../keys.ts";
import { traceAnswer } from "../telemetry/runtime-spans.ts";
import type { ThreadSession } from "../thread/session.ts";
import { recordSteering } from "./steering.ts";
import type { RunResult } from "../types.ts";
import { chooseAnswers, selectTarget, staleError, type ChosenAnswers } from "./target.ts";
import { rootRunsResumedBy, tasksToWake } from "./wake.ts";

/** What applying a command left to do. */
export type Applied =
  /** A request with this id was applied and finished before: its result, returned as is. */
  | { kind: "done"; result: RunResult }
  /** Continue the thread's run with `options`; store the outcome under `requestId` if given. */
  | { kind: "continue"; options: RunOptions; requestId: string | undefined };

/**
 * Applies a resume command to the session's thread (optionally narrowed to a target). The
 * session holds the thread's lease and writes with its fence; the caller continues the run in
 * the same session, so an answer and its continuation are one protocol. An answer recorded by a
 * call that died before continuing is continued by the next call (or the recovery sweep).
 *
 * @throws StaleTargetError, NoMatchingTargetError, AmbiguousResumeError, InvalidAnswerError.
 */
export async function applyCommand(
  session: ThreadSession,
  command: ResumeCommand,
  target: ResumeTarget | null,
  options: RunOptions,
): Promise<Applied> {
  const { store, threadId, actor } = session;
  const requestId = command.options.requestId ?? options.requestId;
  // The continuation is not a request of its own: the answer's request id covers it.
  const { requestId: _covered, ...continueOptions } = { ...options, threadId, actor };
  const proceed: Applied = { kind: "continue", options: continueOptions, requestId };
  if (requestId !== undefined) {
    // A retried request returns what the first one produced, without a second application.
    // Retries serialize on the thread's lease, so a concurrent retry finds the stored result.
    const seen = await session.requestResult(requestId);
    if (seen?.result !== undefined && seen.result !== null)
      return { kind: "done", result: seen.result as RunResult };
    // Applied by an attempt that died before its continuation finished: continue it now.
    if (seen) return proceed;
  }
  const policy = command.options.pendingChildren ?? "keep";
  // A parent resume through graph.resume / invoke: the policy speaks of the root run's children,
  // so the root run's own interrupts are the scope, exactly as resumeTargeted on the root run.
  if (!target && policy !== "keep" && command.kind === "resume")
    target = await rootRunScope(session);
  // An answer reads the rows it names (by id, or the target run's); the thread's whole pending
  // list is read only when needed (an error, an ambiguous resume, a children policy), so one
  // answer among 1,000 pending questions costs what one among ten does.
  let threadPending: StoredInterrupt[] | null = null;
  const allPending = async (): Promise<StoredInterrupt[]> =>
    (threadPending ??= await session.pending());
  let expectedHead: AnswerBatch["expectedHead"];
  let chosen: ChosenAnswers;
  try {
    expectedHead = target ? await checkTarget(session, target) : null;
    const inScope = target
      ? await targetScope(session, target)
      : await threadScope(session, command, allPending);
    chosen = await chooseAnswers(session, command, inScope, allPending, target);
  } catch (error) {
    // A retry of an answer whose call died between storing it and continuing the run: the
    // answer is there, only the continuation is missing. Continue it instead of refusing.
    if (!(error instanceof StaleTargetError || error instanceof NoMatchingTargetError)) throw error;
    const waiting = await answersAwaitingContinuation(session, command, target);
    if (!waiting) throw error;
    if (repeatsStoredAnswer(waiting, command)) return proceed;
    throw await differentAnswerRefused(session, waiting);
  }
  const cancel = await applyChildrenPolicy(policy, chosen, target, allPending);
  for (const [record, value] of chosen) await checkAnswer(record, value);
  const wake = await tasksToWake(session, [...chosen.keys(), ...cancel]);
  const resumeRuns = rootRunsResumedBy([...chosen.keys(), ...cancel]);
  // Nothing written after the answer but the continuation: its first reads can come back with
  // the answer (one round trip on a networked store instead of two).
  const known = session.knownHead();
  const thenRead =
    known && cancel.length === 0 && command.options.steering === undefined
      ? continuationAsk(known)
      : undefined;
  session.dropPrefetched();
  const outcome = await traceAnswer(threadId, [...chosen.keys()], actor, () =>
    store.answerInterrupts({
      ...buildBatch(session, chosen, cancel, wake, requestId, expectedHead),
      ...governance(command, chosen),
      // The root run is running again from the moment the answer is recorded: if this call dies
      // before continuing, the next call or the recovery sweep sees an unfinished run.
      resumeRuns,
      thenRead,
    }),
  );
  if (outcome.ok) session.keepContinuation(outcome.reads, wake);
  if (!outcome.ok) {
    if (outcome.reason === "not_allowed") throw notAllowed(outcome);
    if (outcome.reason !== "duplicate")
      throw await staleError(
        session,
        target?.runId ?? null,
        outcome.reason === "head_moved"
          ? "The head moved while answering."
          : `Interrupt(s) ${outcome.ids.join(", ")} are no longer pending: another answer won.`,
      );
    if (outcome.result !== null && outcome.result !== undefined)
      return { kind: "done", result: outcome.result as RunResult };
    return proceed;
  }
  for (const runId of new Set(cancel.map((c) => c.runId))) {
    const run = await session.run(runId);
    if (run) await session.putRun(run, { status: "cancelled" });
  }
  if (command.options.steering !== undefined)
    await steerAnswered(session, chosen, target, command.options.steering);
  return proceed;
}

/** What the store checks the answers' approval policies with: who answers, which rows have one. */
function governance(
  command: ResumeCommand,
  chosen: ChosenAnswers,
): Pick<AnswerBatch, "principal" | "governed"> {
  const governed = [...chosen.keys()].filter((record) => record.policy).map((record) => record.id);
  return { principal: command.options.principal ?? null, governed };
}

/** The error of an answer an approval policy refused. */
function notAllowed(outcome: Extract<AnswerOutcome, { reason: "not_allowed" }>): NotAllowedError {
  return new NotAllowedError(refusalText(outcome.rule, outcome.policy), {
    interruptId: outcome.interruptId,
    rule: outcome.rule,
    policy: approvalView(outcome.policy, null).policy,
  });
}

/** Answers stored for a root run that still waits for its continuation. */
interface AwaitingAnswers {
  /** The root run, `running` though nobody continues it. */
  runId: string;
  /** The answered interrupts of that run the command names (or, untargeted, all of them). */
  rows: StoredInterrupt[];
}

/**
 * The answers in `command`'s scope already stored while their root run waits for its
 * continuation: the head's run is still `running` though this call holds the thread's lease
 * (so nobody is continuing it — the call that stored the answers died first). Null when there
 * are none, and the command's refusal stands as it is.
 */
async function answersAwaitingContinuation(
  session: ThreadSession,
  command: ResumeCommand,
  target: ResumeTarget | null,
): Promise<AwaitingAnswers | null> {
  const { store, threadId } = session;
  const head = await session.head(ROOT_STREAM);
  if (!head || (await session.run(head.runId))?.status !== "running") return null;
  const ofHeadRun = (row: StoredInterrupt): boolean =>
    row.threadId === threadId && row.status === "answered" && row.path[0]?.runId === head.runId;
  const rows =
    command.kind === "resumeMap"
      ? await store.getInterrupts(Object.keys(command.map).map(asInterruptId))
      : target?.interruptId !== undefined
        ? await store.getInterrupts([asInterruptId(target.interruptId)])
        : target
          ? await session.interruptsOfRun(asRunId(target.runId), "answered")
          : await store.getThreadInterrupts(threadId, "answered");
  const waiting = rows.filter(ofHeadRun);
  return waiting.length > 0 ? { runId: head.runId, rows: waiting } : null;
}

/**
 * Whether `command` gives the stored values again. Such a retry is the same request again, and
 * its outcome is the continued run.
 */
function repeatsStoredAnswer(waiting: AwaitingAnswers, command: ResumeCommand): boolean {
  const same = (row: StoredInterrupt, value: unknown): boolean =>
    isDeepStrictEqual(row.answer ?? null, value ?? null);
  if (command.kind === "resumeMap") {
    const ids = Object.keys(command.map);
    return (
      waiting.rows.length === ids.length &&
      waiting.rows.every((row) => same(row, command.map[row.id as string]))
    );
  }
  return waiting.rows.some((row) => same(row, command.value));
}

/** The longest stored answer a refusal's message quotes; the details carry it whole. */
const QUOTED_ANSWER_CHARS = 200;

/**
 * The refusal of a value other than the one already stored for a run that waits for its
 * continuation: it names the stored answers and the waiting run, and says how to go on.
 */
async function differentAnswerRefused(
  session: ThreadSession,
  waiting: AwaitingAnswers,
): Promise<StaleTargetError> {
  const stored = waiting.rows.map((row) => ({ interruptId: row.id, answer: row.answer ?? null }));
  const quoted = stored
    .map(({ interruptId, answer }) => {
      const text = JSON.stringify(answer) ?? "null";
      const cut =
        text.length > QUOTED_ANSWER_CHARS ? `${text.slice(0, QUOTED_ANSWER_CHARS)}…` : text;
      return `interrupt ${interruptId} = ${cut}`;
    })
    .join(", ");
  const reason = `Run ${waiting.runId} already has a stored answer (${quoted}) and waits to continue with it; a different answer is refused.`;
  const latest = await staleError(session, waiting.runId, reason);
  return new StaleTargetError(
    `${reason} Nothing was applied. Continue the run with invoke(null) or by sending the stored answer again; to decide otherwise, answer its next interrupt or fork from an earlier checkpoint.`,
    { ...latest.details, waitingRunId: waiting.runId, storedAnswers: stored },
  );
}

/**
 * The pending interrupts of the thread a command without a target may answer, read by what it
 * names: a resumeMap's ids, or for `Command.resume(value)` the oldest pending one and the count
 * (enough to tell one from several; the whole list is read only for the ambiguity error).
 */
async function threadScope(
  session: ThreadSession,
  command: ResumeCommand,
  allPending: () => Promise<StoredInterrupt[]>,
): Promise<StoredInterrupt[]> {
  if (command.kind === "resumeMap") {
    const named = await session.interruptsById(Object.keys(command.map).map(asInterruptId));
    return named.filter((i) => i.threadId === session.threadId && i.status === "pending");
  }
  const page = await session.pendingPage(1);
  return page.total > 1 ? allPending() : page.items;
}

/**
 * The pending interrupts a target selects: the one it names by id, else the target run's
 * (through the store's run index).
 */
async function targetScope(
  session: ThreadSession,
  target: ResumeTarget,
): Promise<StoredInterrupt[]> {
  const rows =
    target.interruptId !== undefined
      ? (await session.interruptsById([asInterruptId(target.interruptId)])).filter(
          (i) => i.status === "pending",
        )
      : await session.interruptsOfRun(asRunId(target.runId), "pending");
  return selectTarget(rows, target);
}

/**
 * Refuses a target whose run has finished, or whose head is not the expected checkpoint.
 *
 * @returns the head the answer must still find (when the target names one), else null.
 */
async function checkTarget(
  session: ThreadSession,
  target: ResumeTarget,
): Promise<AnswerBatch["expectedHead"]> {
  const run = await session.run(asRunId(target.runId));
  if (!run || run.threadId !== session.threadId) throw new NotFoundError("run", target.runId);
  if (run.status === "done" || run.status === "cancelled" || run.status === "error")
    throw await staleError(session, run.runId, `Run ${run.runId} is ${run.status}.`);
  if (target.expectedCheckpointId === undefined) return null;
  const head = await session.head(run.stream);
  if (head?.id !== target.expectedCheckpointId)
    throw await staleError(
      session,
      run.runId,
      `Checkpoint ${target.expectedCheckpointId} is not the head of run ${run.runId} (the head is ${head?.id ?? "none"}).`,
    );
  return { stream: run.stream, checkpointId: head.id };
}

/**
 * Parent resume: child interrupts below the target run (or, untargeted, below the runs of the
 * answered interrupts) follow the pendingChildren policy — kept, cancelled (returned), or
 * answered with the policy's value (added to `chosen`).
 */
async function applyChildrenPolicy(
  policy: NonNullable<ResumeCommand["options"]["pendingChildren"]>,
  chosen: ChosenAnswers,
  target: ResumeTarget | null,
  allPending: () => Promise<StoredInterrupt[]>,
): Promise<StoredInterrupt[]> {
  const cancel: StoredInterrupt[] = [];
  if (policy === "keep") return cancel;
  const parents = new Set<string>(target ? [target.runId] : [...chosen.keys()].map((i) => i.runId));
  const children = (await allPending()).filter(
    (i) => !chosen.has(i) && !parents.has(i.runId) && i.path.some((p) => parents.has(p.runId)),
  );
  for (const child of children) {
    if (policy === "cancel") cancel.push(child);
    else chosen.set(child, policy.resolve);
  }
  return cancel;
}

/** Records the steering text given with an answer, scoped to the target or the first answer. */
async function steerAnswered(
  session: ThreadSession,
  chosen: ChosenAnswers,
  target: ResumeTarget | null,
  text: string,
): Promise<void> {
  const first = [...chosen.keys()][0];
  const scope: ResumeTarget = target ?? {
    runId: first?.runId ?? "",
    namespace: first?.namespace ?? [],
    ...(first ? { taskId: first.taskId } : {}),
  };
  await recordSteering(session, scope, text, first?.id);
}

/** The root run of a thread, as a target: the run of the root stream's head checkpoint. */
async function rootRunScope(session: ThreadSession): Promise<ResumeTarget | null> {
  const head = await session.head(ROOT_STREAM);
  return head ? { runId: head.runId, namespace: [] } : null;
}

/** The atomic batch for chosen answers (plus cancellations). */
function buildBatch(
  session: ThreadSession,
  chosen: ChosenAnswers,
  cancel: readonly StoredInterrupt[],
  wake: TaskRef[],
  requestId: string | undefined,
  expectedHead: AnswerBatch["expectedHead"],
): AnswerBatch {
  return {
    threadId: session.threadId,
    answers: [...chosen].map(([record, value]) => ({
      id: record.id,
      value: value === undefined ? null : value,
    })),
    cancel: cancel.map((c) => c.id),
    wake,
    actor: session.actor,
    action: "answer",
    requestId: requestId ?? null,
    expectedHead: expectedHead ?? null,
    readRuns: Object.fromEntries(
      [...chosen.keys(), ...cancel].map((record) => [record.id, record.runId]),
    ),
  };
}
