/**
 * Answering pending interrupts and continuing the run: request-id dedupe, targeting, the
 * pendingChildren policy, schema checks, the atomic answer, steering, then the continued run.
 */
import { randomUUID } from "node:crypto";
import type { Schema, StateOf } from "../channels.ts";
import type { Checkpointer, RunRecord, StoredInterrupt } from "../checkpoint/types.ts";
import { InvalidInputError, NotFoundError } from "../errors.ts";
import type { CheckpointId, RunId, ThreadId } from "../ids.ts";
import type { ResumeCommand } from "../graph/command.ts";
import type { RunResult, SteeringRecord } from "../types.ts";
import type { CompiledGraph, RunOptions } from "./compiled.ts";
import type { EventSink } from "./events.ts";
import {
  buildBatch,
  chooseAnswers,
  selectTarget,
  staleError,
  tasksToWake,
  validateAnswers,
  type ResumeTarget,
} from "./resume.ts";
import { interruptsOfRun } from "./run.ts";

/**
 * Applies a resume command to a thread (optionally narrowed to a target) and continues the run
 * through `continueRun`. The caller holds the thread's lease for both, and `saver` writes with
 * its fence: the answer and its continuation are one protocol, and an answer recorded by a call
 * that died before continuing is continued by the next call (or the recovery sweep).
 *
 * @throws StaleTargetError, NoMatchingTargetError, AmbiguousResumeError, InvalidAnswerError.
 */
export async function resumeWith<S extends Schema>(
  graph: CompiledGraph<S>,
  saver: Checkpointer,
  continueRun: (options: RunOptions, sink: EventSink) => Promise<RunResult<StateOf<S>>>,
  threadId: ThreadId,
  command: ResumeCommand,
  target: ResumeTarget | null,
  options: RunOptions,
  sink: EventSink,
): Promise<RunResult<StateOf<S>>> {
  const actor = command.options.actor ?? options.actor ?? "anonymous";
  const requestId = command.options.requestId ?? options.requestId;
  // The continuation is not a request of its own: the answer's request id covers it.
  const { requestId: _covered, ...continueOptions } = { ...options, threadId, actor };
  if (requestId !== undefined) {
    // A retried request returns what the first one produced, without a second application.
    // Retries serialize on the thread's lease, so a concurrent retry finds the stored result.
    const seen = await saver.getRequestResult(requestId);
    if (seen?.result !== undefined && seen.result !== null)
      return seen.result as RunResult<StateOf<S>>;
    // Applied by an attempt that died before its continuation finished: continue it now.
    if (seen) return finishRequest(saver, requestId, continueRun(continueOptions, sink));
  }
  const policy = command.options.pendingChildren ?? "keep";
  // A parent resume through graph.resume / invoke: the policy speaks of the root run's children,
  // so the root run's own interrupts are the scope, exactly as resumeTargeted on the root run.
  if (!target && policy !== "keep" && command.kind === "resume")
    target = await rootRunScope(saver, threadId);
  // A targeted answer reads only the target run's rows (a run index scan); the thread's whole
  // pending list is read only when needed (a thread-level resume, an error, a children policy).
  let threadPending: StoredInterrupt[] | null = target
    ? null
    : await saver.getThreadInterrupts(threadId, "pending");
  const allPending = async (): Promise<StoredInterrupt[]> =>
    (threadPending ??= await saver.getThreadInterrupts(threadId, "pending"));
  let expectedHead: { stream: string; checkpointId: CheckpointId } | null = null;
  if (target) {
    const run = await saver.getRun(target.runId as RunId);
    if (!run || run.threadId !== threadId) throw new NotFoundError("run", target.runId);
    if (run.status === "done" || run.status === "cancelled" || run.status === "error")
      throw await staleError(saver, threadId, run.runId, `Run ${run.runId} is ${run.status}.`);
    if (target.expectedCheckpointId !== undefined) {
      const head = await saver.getCheckpoint(threadId, run.stream);
      if (head?.id !== target.expectedCheckpointId)
        throw await staleError(
          saver,
          threadId,
          run.runId,
          `Checkpoint ${target.expectedCheckpointId} is not the head of run ${run.runId} (the head is ${head?.id ?? "none"}).`,
        );
      expectedHead = { stream: run.stream, checkpointId: head.id };
    }
  }
  const inScope = selectTarget(
    target
      ? await interruptsOfRun(saver, threadId, target.runId as RunId, "pending")
      : await allPending(),
    target,
  );
  const chosen = await chooseAnswers(saver, threadId, command, inScope, allPending, target);
  // Parent resume: child interrupts below the target run (or, untargeted, below the runs of the
  // answered interrupts) follow the pendingChildren policy.
  const cancel: StoredInterrupt[] = [];
  if (policy !== "keep") {
    const parents = new Set<string>(
      target ? [target.runId] : [...chosen.keys()].map((i) => i.runId),
    );
    const children = (await allPending()).filter(
      (i) => !chosen.has(i) && !parents.has(i.runId) && i.path.some((p) => parents.has(p.runId)),
    );
    for (const child of children) {
      if (policy === "cancel") cancel.push(child);
      else chosen.set(child, policy.resolve);
    }
  }
  await validateAnswers(chosen);
  const wake = await tasksToWake(saver, [...chosen.keys(), ...cancel]);
  const outcome = await saver.answerInterrupts({
    ...buildBatch(threadId, chosen, cancel, wake, actor, requestId, expectedHead),
    // The root run is running again from the moment the answer is recorded: if this call dies
    // before continuing, the next call or the recovery sweep sees an unfinished run.
    runs: await rootRunsResumedBy(saver, [...chosen.keys(), ...cancel]),
  });
  if (!outcome.ok) {
    if (outcome.reason === "duplicate") {
      if (outcome.result !== null && outcome.result !== undefined)
        return outcome.result as RunResult<StateOf<S>>;
    } else if (outcome.reason === "head_moved") {
      throw await staleError(
        saver,
        threadId,
        target?.runId ?? null,
        "The head moved while answering.",
      );
    } else {
      throw await staleError(
        saver,
        threadId,
        target?.runId ?? null,
        `Interrupt(s) ${outcome.ids.join(", ")} are no longer pending: another answer won.`,
      );
    }
  }
  if (outcome.ok) {
    for (const runId of new Set(cancel.map((c) => c.runId))) {
      const run = await saver.getRun(runId);
      if (run)
        await saver.putRun({ ...run, status: "cancelled", updatedAt: new Date().toISOString() });
    }
    if (command.options.steering !== undefined) {
      const first = [...chosen.keys()][0];
      const scope: ResumeTarget = target ?? {
        runId: first?.runId ?? "",
        namespace: first?.namespace ?? [],
        ...(first ? { taskId: first.taskId } : {}),
      };
      await recordSteering(
        saver,
        threadId,
        { ...scope, ...(first && !target?.interruptId ? {} : {}) },
        command.options.steering,
        actor,
        first?.id,
      );
    }
  }
  const continued = continueRun(continueOptions, sink);
  return requestId === undefined ? continued : finishRequest(saver, requestId, continued);
}

/** The root run of a thread, as a target: the run of the root stream's head checkpoint. */
async function rootRunScope(saver: Checkpointer, threadId: ThreadId): Promise<ResumeTarget | null> {
  const head = await saver.getCheckpoint(threadId, "");
  return head ? { runId: head.runId, namespace: [] } : null;
}

/** The root runs of `answered`, moved to `running`. */
async function rootRunsResumedBy(
  saver: Checkpointer,
  answered: readonly StoredInterrupt[],
): Promise<RunRecord[]> {
  const rootIds = new Set(answered.map((i) => i.path[0]?.runId ?? i.runId));
  const runs: RunRecord[] = [];
  const now = new Date().toISOString();
  for (const runId of rootIds) {
    const run = await saver.getRun(runId);
    if (run && run.status === "interrupted")
      runs.push({ ...run, status: "running", updatedAt: now });
  }
  return runs;
}

/** Stores a request's outcome so that a duplicate of it returns the same result. */
async function finishRequest<T>(
  saver: Checkpointer,
  requestId: string,
  running: Promise<T>,
): Promise<T> {
  const result = await running;
  await saver.putRequestResult(requestId, result);
  return result;
}

/** Records a steering instruction (and its audit line) for a target. */
export async function recordSteering(
  saver: Checkpointer,
  threadId: ThreadId,
  target: ResumeTarget,
  text: string,
  actor: string,
  interruptId?: string,
): Promise<SteeringRecord> {
  if (typeof text !== "string" || text.trim() === "")
    throw new InvalidInputError("Steering text must be a non-empty string.");
  const run = await saver.getRun(target.runId as RunId);
  const head = await saver.getCheckpoint(threadId, run?.stream ?? "");
  const record: SteeringRecord = {
    id: `s_${randomUUID()}`,
    threadId,
    runId: target.runId as RunId,
    ...(target.taskId !== undefined
      ? { taskId: target.taskId as SteeringRecord["taskId"] & string }
      : {}),
    ...(target.interruptId !== undefined || interruptId !== undefined
      ? {
          interruptId: (target.interruptId ?? interruptId) as NonNullable<
            SteeringRecord["interruptId"]
          >,
        }
      : {}),
    namespace: [...target.namespace],
    text,
    actor,
    checkpointId: head?.id ?? null,
    createdAt: new Date().toISOString(),
  };
  await saver.appendSteering(record);
  await saver.appendAudit({
    id: `a_${randomUUID()}`,
    threadId,
    runId: record.runId,
    ...(record.interruptId ? { interruptId: record.interruptId } : {}),
    action: "steer",
    actor,
    data: { steeringId: record.id, text },
    createdAt: record.createdAt,
  });
  return record;
}
