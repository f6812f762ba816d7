/**
 * One call on a root run: create the thread if needed, refuse input while a run is unfinished
 * (or cancel its pause when asked), start or continue the run, and shape its {@link RunResult}.
 */
import type { PendingPage, RunRecord, ThreadHead, ThreadRecord } from "../checkpoint/types.ts";
import {
  FencedOutError,
  MissingCheckpointerError,
  RunHandedOverError,
  RunInProgressError,
} from "../errors.ts";
import type { GraphDefinition } from "../graph/definition.ts";
import type { RunOptions } from "../graph/options.ts";
import { asCheckpointId, asRunId, requestRunIdFor, type RunId } from "../ids.ts";
import { toPublicInterrupt } from "../interrupts/records.ts";
import { parseSelectors, selectorsFor } from "../interrupts/static.ts";
import { ROOT_STREAM } from "../keys.ts";
import type { ThreadSession } from "../thread/session.ts";
import { pendingPageOf } from "../thread/narrow-reads.ts";
import { RUN_RESULT_INTERRUPT_LIMIT, type RunResult, type SteeringRecord } from "../types.ts";
import type { EventSink } from "./events.ts";
import { startContinuationReads } from "./continuation.ts";
import { Execution, runSignalOf, type RunSignal } from "./execution.ts";
import type { HeldLease } from "../thread/lease.ts";
import {
  checkInputChannels,
  describeError,
  modelFailureDetails,
  newRootRun,
  runStream,
  type StreamRunOutcome,
} from "./stream.ts";

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
  const { durable } = session;
  const requestId = durable ? options.requestId : undefined;
  if (requestId !== undefined) {
    const seen = await session.requestResult(requestId);
    if (seen?.result !== undefined && seen.result !== null) return seen.result as RunResult;
    // The request's result is stored after the run: the lease must outlive the run's last write.
    session.keepLeaseAfterRun();
  }
  if (input) checkInputChannels(definition, input);
  // A continuation (input `null`) of a head this process holds starts its reads beside the head
  // read instead of after it: one round trip fewer on a networked store. They are used only if
  // the head read hands back that same head; under the lease nothing else writes the thread.
  const known = durable && !input && !options.checkpointId ? session.knownHead() : undefined;
  // Started as for a run without `after` pauses (most runs): `continueAt` checks the guess.
  const early =
    known && startContinuationReads(session, definition.schema, ROOT_STREAM, known, false);
  // One read for the head, its run, the thread row and the pending count.
  const read = durable ? await session.threadHead() : undefined;
  const head = read?.checkpoint;
  // A new thread's row is stored with the thread's first commit, not by a write of its own.
  const newThread =
    read && !read.thread ? session.newThread(options.tenant, options.metadata) : undefined;
  const start = await chooseRun(definition, session, input, options, read, requestId);
  const exec = rootExecution(definition, session, start.run, options, sink, {
    thread: read?.thread ?? newThread,
    steering: read?.steering ?? [],
  });
  let streamed: StreamRunOutcome;
  try {
    streamed = await runStream({
      definition,
      exec,
      selectors: selectorsFor(definition, start.run, 0),
      input: start.input,
      fromCheckpointId:
        options.checkpointId === undefined ? undefined : asCheckpointId(options.checkpointId),
      // Read above: `null` says the thread has no head yet, so it is not read again.
      head: read ? (head ?? null) : undefined,
      run: start.run,
      // Written with the input checkpoint when there is one, skipped when already stored running.
      writeRunRow: !start.storedRunning,
      newThread,
      // The run's last write ends the lease too, unless something is stored after it or another
      // call of this process waits for the lease.
      releaseLeaseAtEnd: () => session.releasesWithLastWrite,
      continuation: early,
    });
  } catch (error) {
    // A run must not stay `running` because something threw past the loop; only a process
    // that lost its lease, or handed the run over, leaves it as is, for the new owner.
    if (durable && !(error instanceof FencedOutError) && !(error instanceof RunHandedOverError))
      await session
        .putRun(start.run, { status: "error", error: describeError(error) })
        .catch(() => undefined);
    throw error;
  }
  if (durable) session.rememberHead(streamed.state.head);
  const result = await toResult(session, exec, streamed);
  if (requestId !== undefined) await session.store.putRequestResult(requestId, result);
  return result;
}

/** Which run a call runs, from which input, and whether its row already says `running`. */
interface RunStart {
  run: RunRecord;
  /** Input to apply, or `undefined` to continue from the head. */
  input: Record<string, unknown> | undefined;
  /** The stored run row already says `running` (the answer that woke it wrote it). */
  storedRunning: boolean;
}

/**
 * Picks the run of a call: the run a retried request started, the thread's run to continue
 * (input `null`), or a new run for input — refused while the thread's last run is unfinished.
 */
async function chooseRun(
  definition: GraphDefinition,
  session: ThreadSession,
  input: Record<string, unknown> | null,
  options: RunOptions,
  read: ThreadHead | undefined,
  requestId: string | undefined,
): Promise<RunStart> {
  const { threadId } = session;
  const head = read?.checkpoint;
  const runOptions =
    options.interruptBefore || options.interruptAfter
      ? {
          interruptBefore: options.interruptBefore ?? [],
          interruptAfter: options.interruptAfter ?? [],
        }
      : null;
  const fresh = (runId?: RunId): RunRecord =>
    newRootRun(threadId, definition.name, runOptions, runId, session.actor, session.now());
  const requestRunId = requestId === undefined ? undefined : requestRunIdFor(threadId, requestId);
  const requestRun = requestRunId === undefined ? undefined : await session.run(requestRunId);
  let start: RunStart;
  if (requestRun && requestRun.threadId === threadId && head?.runId === requestRun.runId) {
    // A retry whose first attempt applied its input: continue that run, do not start another.
    start = {
      run: { ...requestRun, status: "running", updatedAt: session.now() },
      input: undefined,
      storedRunning: requestRun.status === "running",
    };
  } else if (input === null || input === undefined) {
    const previous = head && !options.checkpointId ? read?.run : undefined;
    // A fork with no input (a past checkpoint's next step run again) is a new run, named by the
    // caller's run id when it gives one (a server names the run before it starts).
    const forkId =
      options.checkpointId && options.runId !== undefined && options.runId !== head?.runId
        ? asRunId(options.runId)
        : undefined;
    // A cancelled run stays cancelled: continuing its thread is a new run from its head.
    start = {
      run:
        previous && previous.status !== "cancelled"
          ? { ...previous, status: "running", updatedAt: session.now() }
          : fresh(forkId),
      input: head ? undefined : {},
      storedRunning: previous?.status === "running",
    };
  } else {
    if (read) await refuseWhileUnfinished(session, read, options);
    const runId = options.runId === undefined ? requestRunId : asRunId(options.runId);
    start = { run: fresh(runId), input, storedRunning: false };
  }
  // A fork from a past checkpoint is a new run, never a continuation of the head's.
  if (options.checkpointId && start.run.runId === head?.runId)
    start = { ...start, run: fresh(), storedRunning: false };
  return start;
}

/** The environment of a root run: the session, the run, its signal, steering and selectors. */
function rootExecution(
  definition: GraphDefinition,
  session: ThreadSession,
  run: RunRecord,
  options: RunOptions,
  sink: EventSink,
  { thread, steering }: { thread: ThreadRecord | undefined; steering: SteeringRecord[] },
): Execution {
  return new Execution({
    session,
    runId: run.runId,
    stream: ROOT_STREAM,
    namespace: [],
    path: [],
    graphName: definition.name,
    schema: definition.schema,
    tenant: thread?.tenant ?? null,
    determinism: definition.determinism,
    abort: rootSignal(options.signal, session.lease),
    sink,
    steering,
    lineage: [run.runId],
    requester: run.requester ?? null,
    approvers: definition.approvers,
    runSelectors: {
      before: parseSelectors(run.options?.interruptBefore, 0),
      after: parseSelectors(run.options?.interruptAfter, 0),
    },
  });
}

/** A root run's abort signal: the caller's, the lease's (aborted when lost), or both. */
function rootSignal(caller: AbortSignal | undefined, lease: HeldLease | undefined): RunSignal {
  if (!lease) return runSignalOf(caller ?? NEVER_ABORTED);
  let made: AbortSignal | undefined;
  return {
    get aborted() {
      return made ? made.aborted : caller?.aborted === true || lease.aborted;
    },
    get signal() {
      return (made ??= caller ? AbortSignal.any([caller, lease.signal]) : lease.signal);
    },
  };
}

/**
 * The {@link RunResult} of a call: status, values, the thread's oldest pending interrupts and
 * their count, the failure.
 *
 * @throws MissingCheckpointerError when a graph without a checkpointer asked to pause.
 */
async function toResult(
  session: ThreadSession,
  exec: Execution,
  { outcome, state }: StreamRunOutcome,
): Promise<RunResult> {
  // Without a checkpointer nothing was recorded, and a pause cannot be: asking for one is a
  // configuration error of the caller, raised as such rather than returned as a failed run.
  if (
    !session.durable &&
    outcome.status === "error" &&
    outcome.error instanceof MissingCheckpointerError
  )
    throw outcome.error;
  // A page and a count, not the whole list: answering one of 1,000 parallel questions must not
  // decode the other 999 on every call.
  const pending =
    outcome.status === "interrupted"
      ? (session.takePendingPage() ??
        (await pendingPageOf(session.store, session.threadId, RUN_RESULT_INTERRUPT_LIMIT)))
      : { items: [], total: 0 };
  const result: RunResult = {
    threadId: session.threadId,
    runId: exec.runId,
    status: outcome.status,
    values: state.values,
    interrupts: [],
    pendingCount: pending.total,
    checkpointId: session.durable ? state.head.id : null,
    ...(exec.rejectedAnswers.length > 0 ? { rejectedAnswers: [...exec.rejectedAnswers] } : {}),
  };
  if (pending.total > 0) decodeWhenRead(result, pending);
  if (outcome.status === "error") {
    const err = outcome.error;
    result.error = {
      name: err instanceof Error ? err.name : "Error",
      message: err instanceof Error ? err.message : String(err),
      ...(err && typeof err === "object" && "code" in err && typeof err.code === "string"
        ? { code: err.code }
        : {}),
      ...(outcome.failedNode ? { node: outcome.failedNode } : {}),
      ...modelFailureDetails(err),
    };
  }
  return result;
}

/**
 * Makes `result.interrupts` the page's records, decoded the first time it is read (by the caller,
 * `JSON.stringify`, a copy or the request store): a caller answering 1,000 parallel questions
 * one by one and looking only at `status` decodes none of the page. It stays an ordinary,
 * enumerable, assignable property to anyone reading it.
 */
function decodeWhenRead(result: RunResult, page: PendingPage): void {
  const keep = (value: RunResult["interrupts"]): RunResult["interrupts"] => {
    Object.defineProperty(result, "interrupts", {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
    return value;
  };
  Object.defineProperty(result, "interrupts", {
    get: () => keep(page.items.map(toPublicInterrupt)),
    set: keep,
    enumerable: true,
    configurable: true,
  });
}

/**
 * Refuses plain input while the thread's last run is unfinished: paused on interrupts
 * ({@link ThreadInterruptedError}, unless `onPending: "cancel"` cancels them), or running —
 * elsewhere, left by a crashed process, or holding an answer not yet applied
 * ({@link RunInProgressError}). Starting a run beside it would lose that work.
 */
async function refuseWhileUnfinished(
  session: ThreadSession,
  read: ThreadHead,
  options: RunOptions,
): Promise<void> {
  const headRunId = read.checkpoint?.runId;
  let last = read.run;
  if (read.pendingInterrupts > 0) {
    await session.cancelPending(await session.pending(), options.onPending ?? "error");
    // Cancelling marked the paused runs cancelled: read the head's run as it is now.
    if (headRunId !== undefined) last = await session.run(headRunId);
  }
  if (last && (last.status === "running" || last.status === "interrupted"))
    throw new RunInProgressError(session.threadId, last.runId, last.status);
}
