/**
 * One call on a root run: create the thread if needed, refuse input while a run is unfinished
 * (or cancel its pause when asked), start or continue the run, and shape its {@link RunResult}.
 */
import type { RunRecord } from "../checkpoint/types.ts";
import { FencedOutError, MissingCheckpointerError, RunInProgressError } from "../errors.ts";
import type { GraphDefinition } from "../graph/definition.ts";
import type { RunOptions } from "../graph/options.ts";
import { asCheckpointId, asRunId, requestRunIdFor, type RunId } from "../ids.ts";
import { toPublicInterrupt } from "../interrupts/records.ts";
import { parseSelectors, selectorsFor } from "../interrupts/static.ts";
import { ROOT_STREAM } from "../keys.ts";
import type { ThreadSession } from "../thread/session.ts";
import type { RunResult } from "../types.ts";
import type { EventSink } from "./events.ts";
import { Execution } from "./execution.ts";
import { checkInputChannels, describeError, newRootRun, runStream } from "./stream.ts";

/** A signal that never aborts, shared by runs without one (creating one per run shows in profiles). */
const NEVER_ABORTED = new AbortController().signal;

/**
 * Runs one call of a root run in `session`, which holds the thread's lease (absent only without
 * a checkpointer) and writes with its fence. Input `null` continues the run from its head.
 *
 * With `options.requestId`, a call that was made before returns its stored result, and a retry
 * of a call that crashed continues the run its first attempt started (same run id, so the same
 * task ids and idempotency keys).
 *
 * @throws ThreadInterruptedError for input to a thread with pending interrupts.
 * @throws RunInProgressError for input to a thread whose run is unfinished without a pause.
 */
export async function runRoot(
  definition: GraphDefinition,
  session: ThreadSession,
  input: Record<string, unknown> | null,
  options: RunOptions,
  sink: EventSink,
): Promise<RunResult> {
  const { durable, threadId, lease } = session;
  const store = session.store;
  const requestId = durable ? options.requestId : undefined;
  if (requestId !== undefined) {
    const seen = await session.requestResult(requestId);
    if (seen?.result !== undefined && seen.result !== null) return seen.result as RunResult;
  }
  if (input) checkInputChannels(definition, input);
  const thread = durable ? await session.ensureThread(options.tenant, options.metadata) : undefined;
  const head = durable ? await session.head() : undefined;
  const runOptions =
    options.interruptBefore || options.interruptAfter
      ? {
          interruptBefore: options.interruptBefore ?? [],
          interruptAfter: options.interruptAfter ?? [],
        }
      : null;
  const requestRun =
    requestId === undefined ? undefined : await session.run(requestRunIdFor(threadId, requestId));
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
    const previous = head && !options.checkpointId ? await session.run(head.runId) : undefined;
    // A cancelled run stays cancelled: continuing its thread is a new run from its head.
    storedRunning = previous?.status === "running";
    run =
      previous && previous.status !== "cancelled"
        ? { ...previous, status: "running", updatedAt: new Date().toISOString() }
        : newRootRun(threadId, definition.name, runOptions);
    streamInput = head ? undefined : {};
  } else {
    if (durable) await refuseWhileUnfinished(session, head?.runId, options);
    run = newRootRun(
      threadId,
      definition.name,
      runOptions,
      (options.runId === undefined ? undefined : asRunId(options.runId)) ??
        (requestId === undefined ? undefined : requestRunIdFor(threadId, requestId)),
    );
    streamInput = input;
  }
  if (options.checkpointId && run.runId === head?.runId) {
    run = newRootRun(threadId, definition.name, runOptions);
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
    session,
    runId: run.runId,
    stream: ROOT_STREAM,
    namespace: [],
    path: [],
    graphName: definition.name,
    schema: definition.schema,
    tenant: thread?.tenant ?? null,
    determinism: definition.determinism,
    signal: controller,
    sink,
    steering: durable ? await session.steering() : [],
    lineage: [run.runId],
    runSelectors: {
      before: parseSelectors(run.options?.interruptBefore, 0),
      after: parseSelectors(run.options?.interruptAfter, 0),
    },
  });
  let streamed: Awaited<ReturnType<typeof runStream>>;
  try {
    streamed = await runStream({
      definition,
      exec,
      selectors: selectorsFor(definition, run, 0),
      input: streamInput,
      fromCheckpointId:
        options.checkpointId === undefined ? undefined : asCheckpointId(options.checkpointId),
      head,
      run,
      writeRunRow,
    });
  } catch (error) {
    // A run must not stay `running` because something threw past the loop; only a process
    // that lost its lease leaves it as is, for the new owner.
    if (durable && !(error instanceof FencedOutError))
      await store
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
  const pending = outcome.status === "interrupted" ? await session.pending() : [];
  const result: RunResult = {
    threadId,
    runId: run.runId,
    status: outcome.status,
    values: state.values,
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
  if (requestId !== undefined) await store.putRequestResult(requestId, result);
  return result;
}

/**
 * Refuses plain input while the thread's last run is unfinished: paused on interrupts
 * ({@link ThreadInterruptedError}, unless `onPending: "cancel"` cancels them), or running —
 * elsewhere, left by a crashed process, or holding an answer not yet applied
 * ({@link RunInProgressError}). Starting a run beside it would lose that work.
 */
async function refuseWhileUnfinished(
  session: ThreadSession,
  headRunId: RunId | undefined,
  options: RunOptions,
): Promise<void> {
  await session.cancelPending(await session.pending(), options.onPending ?? "error");
  if (headRunId === undefined) return;
  const last = await session.run(headRunId);
  if (last && (last.status === "running" || last.status === "interrupted"))
    throw new RunInProgressError(session.threadId, last.runId, last.status);
}
