/**
 * One call on a root run: create the thread if needed, refuse input while a run is unfinished
 * (or cancel its pause when asked), start or continue the run, and shape its {@link RunResult}.
 */
import type { Schema, StateOf, UpdateOf } from "../channels.ts";
import type { Checkpointer, RunRecord } from "../checkpoint/types.ts";
import { FencedOutError, MissingCheckpointerError, RunInProgressError } from "../errors.ts";
import { requestRunIdFor, type CheckpointId, type ThreadId } from "../ids.ts";
import type { RunResult } from "../types.ts";
import type { CompiledGraph, RunOptions } from "./compiled.ts";
import type { EventSink } from "./events.ts";
import { Execution } from "./execution.ts";
import { toPublicInterrupt } from "./interrupt-records.ts";
import type { HeldLease } from "./lease.ts";
import { checkInputChannels, describeError, guardPending, newRootRun, runStream } from "./run.ts";
import { parseSelectors } from "./selectors.ts";

/** A signal that never aborts, shared by runs without one (creating one per run shows in profiles). */
const NEVER_ABORTED = new AbortController().signal;

/**
 * Runs one call of a root run while the caller holds the thread's lease (`lease`; absent only
 * without a checkpointer). `saver` writes with the lease's fence.
 *
 * With `options.requestId`, a call that was made before returns its stored result, and a retry
 * of a call that crashed continues the run its first attempt started (same run id, so the same
 * task ids and idempotency keys).
 *
 * @throws ThreadInterruptedError for input to a thread with pending interrupts.
 * @throws RunInProgressError for input to a thread whose run is unfinished without a pause.
 */
export async function runRoot<S extends Schema>(
  graph: CompiledGraph<S>,
  saver: Checkpointer,
  durable: boolean,
  threadId: ThreadId,
  input: UpdateOf<S> | null,
  options: RunOptions,
  sink: EventSink,
  lease?: HeldLease,
): Promise<RunResult<StateOf<S>>> {
  const requestId = durable ? options.requestId : undefined;
  if (requestId !== undefined) {
    const seen = await saver.getRequestResult(requestId);
    if (seen?.result !== undefined && seen.result !== null)
      return seen.result as RunResult<StateOf<S>>;
  }
  if (input) checkInputChannels(graph.runtime.shape, input);
  const actor = options.actor ?? "anonymous";
  let thread = durable ? await saver.getThread(threadId) : undefined;
  if (durable && !thread) {
    const now = new Date().toISOString();
    thread = {
      threadId,
      tenant: options.tenant ?? null,
      metadata: options.metadata ?? {},
      createdAt: now,
      updatedAt: now,
    };
    await saver.putThread(thread);
  }
  const head = durable ? await saver.getCheckpoint(threadId, "") : undefined;
  const runOptions =
    options.interruptBefore || options.interruptAfter
      ? {
          interruptBefore: options.interruptBefore ?? [],
          interruptAfter: options.interruptAfter ?? [],
        }
      : null;
  const requestRun =
    requestId === undefined ? undefined : await saver.getRun(requestRunIdFor(threadId, requestId));
  let run: RunRecord;
  let streamInput: Record<string, unknown> | undefined;
  // Whether the stored run row already says `running` (the answer that woke it wrote it).
  let storedRunning = false;
  if (requestRun && requestRun.threadId === threadId && head?.runId === requestRun.runId) {
    // A retry whose first attempt applied its input: continue that run, do not start another.
    storedRunning = requestRun.status === "running";
    run = { ...requestRun, status: "running", updatedAt: new Date().toISOString() };
    streamInput = undefined;
  } else if (input === null || input === undefined) {
    const previous = head && !options.checkpointId ? await saver.getRun(head.runId) : undefined;
    // A cancelled run stays cancelled: continuing its thread is a new run from its head.
    storedRunning = previous?.status === "running";
    run =
      previous && previous.status !== "cancelled"
        ? { ...previous, status: "running", updatedAt: new Date().toISOString() }
        : newRootRun(threadId, graph.name, runOptions);
    streamInput = head ? undefined : {};
  } else {
    if (durable) await refuseWhileUnfinished(saver, threadId, head?.runId, options, actor);
    run = newRootRun(
      threadId,
      graph.name,
      runOptions,
      requestId === undefined ? undefined : requestRunIdFor(threadId, requestId),
    );
    streamInput = input;
  }
  if (options.checkpointId && run.runId === head?.runId) {
    run = newRootRun(threadId, graph.name, runOptions);
    storedRunning = false;
  }
  // Written with the input checkpoint when there is one, skipped when already stored as running.
  const writeRunRow = !storedRunning;
  const signals = [options.signal, lease?.signal].filter((s) => s !== undefined);
  const controller =
    signals.length === 0
      ? NEVER_ABORTED
      : signals.length === 1
        ? (signals[0] as AbortSignal)
        : AbortSignal.any(signals);
  const exec = new Execution({
    threadId,
    runId: run.runId,
    stream: "",
    namespace: [],
    path: [],
    graphName: graph.name,
    schema: graph.runtime.shape.schema,
    tenant: thread?.tenant ?? null,
    saver,
    durable,
    determinism: graph.determinism,
    signal: controller,
    sink,
    steering: durable ? await saver.listSteering(threadId) : [],
    lineage: [run.runId],
    runSelectors: {
      before: parseSelectors(run.options?.interruptBefore, 0),
      after: parseSelectors(run.options?.interruptAfter, 0),
    },
    lease,
  });
  let streamed: Awaited<ReturnType<typeof runStream>>;
  try {
    streamed = await runStream({
      graph: graph.runtime,
      exec,
      selectors: graph.selectorsFor(run, 0),
      input: streamInput,
      fromCheckpointId: options.checkpointId as CheckpointId | undefined,
      head,
      run,
      writeRunRow,
    });
  } catch (error) {
    // A run must not stay `running` because something threw past the loop; only a process
    // that lost its lease leaves it as is, for the new owner.
    if (durable && !(error instanceof FencedOutError))
      await saver
        .putRun({
          ...run,
          status: "error",
          updatedAt: new Date().toISOString(),
          error: describeError(error),
        })
        .catch(() => undefined);
    throw error;
  }
  const { outcome, state } = streamed;
  // Without a checkpointer nothing was recorded, and a pause cannot be: asking for one is a
  // configuration error of the caller, raised as such rather than returned as a failed run.
  if (!durable && outcome.status === "error" && outcome.error instanceof MissingCheckpointerError)
    throw outcome.error;
  const pending =
    outcome.status === "interrupted" ? await saver.getThreadInterrupts(threadId, "pending") : [];
  const result: RunResult<StateOf<S>> = {
    threadId,
    runId: run.runId,
    status: outcome.status,
    values: state.values as StateOf<S>,
    interrupts: pending.map(toPublicInterrupt),
    checkpointId: durable ? state.head.id : null,
    ...(exec.rejectedAnswers.length > 0 ? { rejectedAnswers: [...exec.rejectedAnswers] } : {}),
  };
  if (outcome.status === "error") {
    const err = outcome.error;
    result.error = {
      name: err instanceof Error ? err.name : "Error",
      message: err instanceof Error ? err.message : String(err),
      ...(err && typeof err === "object" && "code" in err && typeof err.code === "string"
        ? { code: err.code }
        : {}),
      ...(outcome.failedNode ? { node: outcome.failedNode } : {}),
    };
  }
  if (requestId !== undefined) await saver.putRequestResult(requestId, result);
  return result;
}

/**
 * Refuses plain input while the thread's last run is unfinished: paused on interrupts
 * ({@link ThreadInterruptedError}, unless `onPending: "cancel"` cancels them), or running —
 * elsewhere, left by a crashed process, or holding an answer not yet applied
 * ({@link RunInProgressError}). Starting a run beside it would lose that work.
 */
async function refuseWhileUnfinished(
  saver: Checkpointer,
  threadId: ThreadId,
  headRunId: RunRecord["runId"] | undefined,
  options: RunOptions,
  actor: string,
): Promise<void> {
  const pending = await saver.getThreadInterrupts(threadId, "pending");
  await guardPending(saver, threadId, pending, options.onPending ?? "error", actor);
  if (headRunId === undefined) return;
  const last = await saver.getRun(headRunId);
  if (last && (last.status === "running" || last.status === "interrupted"))
    throw new RunInProgressError(threadId, last.runId, last.status);
}
