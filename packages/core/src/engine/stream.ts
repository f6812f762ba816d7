/**
 * Running one stream (the root run's or a child run's): loading its head, applying input or
 * forking, running the loop, recording the run's status.
 */
import { hasCapability } from "../checkpoint/capabilities.ts";
import type { CheckpointRecord, RunRecord, ThreadRecord } from "../checkpoint/types.ts";
import { RUN_RESULT_INTERRUPT_LIMIT } from "../types.ts";
import { ErrorCodes, InvalidInputError, ReinError, RunHandedOverError } from "../errors.ts";
import { START, type GraphDefinition, type RunSelectors } from "../graph/definition.ts";
import {
  newCheckpointId,
  newRunId,
  taskIdFor,
  type CheckpointId,
  type RunId,
  type TaskId,
  type ThreadId,
} from "../ids.ts";
import { ROOT_STREAM } from "../keys.ts";
import { traceRun } from "../telemetry/runtime-spans.ts";
import { applyWrites, scheduleNext } from "./barrier.ts";
import { continueAt, type ContinuationReads } from "./continuation.ts";
import type { Execution } from "./execution.ts";
import { runLoop, type LoopOutcome, type LoopState } from "./loop.ts";
import type { RunEnd } from "./task.ts";

/** Everything a stream run needs to start or continue. */
export interface StreamRunInput {
  definition: GraphDefinition;
  exec: Execution;
  selectors: RunSelectors;
  /** Input to apply (a new run of this stream), or `undefined` to continue from the head. */
  input: Record<string, unknown> | undefined;
  /** Start from this checkpoint instead of the head (fork / replay). */
  fromCheckpointId?: CheckpointId | undefined;
  /**
   * The stream's head when the caller already read it (saves a round trip); `null` when the
   * caller read that the stream has none (a new thread).
   */
  head?: CheckpointRecord | null | undefined;
  /** The run row to keep up to date. */
  run: RunRecord;
  /**
   * Whether the run row must still be written as `running`. When the call applies input, the
   * row goes with the input checkpoint's commit instead of a write of its own.
   */
  writeRunRow?: boolean;
  /** The row of a thread not stored yet: it goes with the stream's first commit. */
  newThread?: ThreadRecord | undefined;
  /** Reads of a continuation started before the head was known (used when it is their head). */
  continuation?: ContinuationReads | undefined;
  /**
   * Whether the write that ends the run (its last commit, or the pause) also ends the lease:
   * asked when that write is made.
   */
  releaseLeaseAtEnd?: () => boolean;
}

/** Result of a stream run: the loop outcome and where the stream stands. */
export interface StreamRunOutcome {
  outcome: LoopOutcome;
  state: LoopState;
}

/**
 * Runs one stream (the root graph or a child run): applies input or continues from the head,
 * then runs the loop and records the run status.
 */
export function runStream(input: StreamRunInput): Promise<StreamRunOutcome> {
  return traceRun(input.run, () => runStreamUntraced(input));
}

async function runStreamUntraced(input: StreamRunInput): Promise<StreamRunOutcome> {
  const { exec, definition } = input;
  const store = exec.store;
  let head =
    input.head !== undefined && !input.fromCheckpointId
      ? (input.head ?? undefined)
      : await exec.session.head(exec.stream, input.fromCheckpointId);
  if (input.fromCheckpointId && !head)
    throw new InvalidInputError(
      `Checkpoint ${input.fromCheckpointId} does not exist on this thread.`,
      { checkpointId: input.fromCheckpointId },
    );
  let state: LoopState;
  const runRow = input.writeRunRow ? input.run : undefined;
  if (input.input === undefined && head) {
    // Continuing: no input commit to carry the rows, so they are written on their own. (A thread
    // with a head but no row was stored before rows were kept.)
    if (runRow) await store.putRun(runRow);
    // Only a thread stored before rows were kept: a store without thread rows of their own
    // writes the row with its next commit instead.
    if (input.newThread && hasCapability(store, "threadCatalog"))
      await store.putThread(input.newThread);
  }
  if (input.input !== undefined || !head) {
    const currentHead = input.fromCheckpointId ? await exec.session.head(exec.stream) : head;
    state = await applyInput(
      definition,
      exec,
      head,
      currentHead?.id ?? null,
      input.input ?? {},
      input.fromCheckpointId ? "fork" : "input",
      { runRow, thread: input.newThread },
    );
    head = state.head;
  } else if (input.fromCheckpointId) {
    // Replaying from a past checkpoint: copy it to a new head so history forks instead of rewriting.
    state = await forkAt(definition, exec, head);
  } else {
    state = await continueAt(definition, exec, head, input.selectors, input.continuation);
  }
  const run = input.run;
  // The status a commit or a pause already stored with the run row (so no write of its own).
  let storedStatus: RunRecord["status"] | null = null;
  const endAs = (status: "done" | "interrupted") => (): RunEnd => {
    storedStatus = status;
    return {
      runs: [{ ...run, status, updatedAt: exec.session.now(), error: null }],
      ...(input.releaseLeaseAtEnd?.() ? { releaseLease: true } : {}),
      // The pause that ends the root run is its last write: the run result's page of pending
      // interrupts can come back with it.
      ...(status === "interrupted" && exec.stream === ROOT_STREAM
        ? { thenReadPending: RUN_RESULT_INTERRUPT_LIMIT }
        : {}),
    };
  };
  const outcome = await runLoop(
    {
      definition,
      exec,
      selectors: input.selectors,
      // The last step's commit carries the `done` run row, and the pause that ends a run its
      // `interrupted` row, so finishing or pausing costs no extra write.
      runEndAtCommit: endAs("done"),
      runEndAtPause: endAs("interrupted"),
    },
    state,
  );
  // A lost lease aborted the run: another process owns the thread now, so record nothing (the
  // write would be refused, or would mark a healthy run cancelled after a store outage).
  exec.lease?.assertHeld();
  // A hand-over (the process is shutting down) is not a cancellation: the run stays `running`,
  // and once this call's lease is released another process continues it from its last checkpoint.
  if (outcome.status === "cancelled" && exec.abort.aborted) {
    const reason: unknown = exec.abort.signal.reason;
    if (reason instanceof RunHandedOverError) throw reason;
  }
  if (outcome.status !== storedStatus) {
    const error =
      outcome.error === undefined ? null : describeError(outcome.error, outcome.failedNode);
    await store.putRun({
      ...run,
      status: outcome.status,
      updatedAt: exec.session.now(),
      error,
    });
  }
  return { outcome, state };
}

async function applyInput(
  definition: GraphDefinition,
  exec: Execution,
  base: CheckpointRecord | undefined,
  expectedHeadId: CheckpointId | null,
  input: Record<string, unknown>,
  source: "input" | "fork",
  rows: { runRow: RunRecord | undefined; thread: ThreadRecord | undefined },
): Promise<LoopState> {
  const values = await exec.session.values(definition.schema, base);
  const id = newCheckpointId(expectedHeadId);
  const writes = Object.entries(input).filter(([, v]) => v !== undefined);
  checkInputChannels(definition, input);
  const barrier = applyWrites(
    definition,
    values,
    base ? { ...base.versions } : {},
    [{ kind: "writes", taskId: "input" as TaskId, node: START, writes, gotos: [], sends: [] }],
    id,
  );
  const step = base ? base.step + 1 : -1;
  const next = await scheduleNext(definition, exec, [START], barrier.values, step + 1);
  const checkpoint: CheckpointRecord = {
    threadId: exec.threadId,
    stream: exec.stream,
    id,
    parentId: base?.id ?? null,
    runId: exec.runId,
    step,
    versions: barrier.versions,
    next,
    source,
    createdAt: exec.session.now(),
    metadata: { input: Object.keys(input) },
  };
  await exec.store.commitStep({
    checkpoint,
    expectedHeadId,
    blobs: barrier.blobs,
    ...(rows.runRow ? { runs: [rows.runRow] } : {}),
    ...(rows.thread ? { thread: rows.thread } : {}),
  });
  emitCheckpoint(exec, checkpoint, barrier.values);
  return {
    head: checkpoint,
    values: barrier.values,
    versions: barrier.versions,
    results: [],
    interrupts: [],
  };
}

async function forkAt(
  definition: GraphDefinition,
  exec: Execution,
  from: CheckpointRecord,
): Promise<LoopState> {
  const current = await exec.session.head(exec.stream);
  const id = newCheckpointId(current?.id ?? from.id);
  // A fork is a new run: its tasks get the ids that run derives, so no answer or write of the
  // original branch is mistaken for one of the fork.
  const next = from.next.map((t) => ({
    ...t,
    id: taskIdFor(exec.threadId, exec.runId, exec.namespace, from.step + 1, t.node, t.trigger),
  }));
  const checkpoint: CheckpointRecord = {
    ...from,
    id,
    parentId: from.id,
    runId: exec.runId,
    next,
    source: "fork",
    createdAt: exec.session.now(),
    metadata: { forkedFrom: from.id },
  };
  await exec.store.commitStep({ checkpoint, expectedHeadId: current?.id ?? null, blobs: [] });
  return {
    head: checkpoint,
    values: await exec.session.values(definition.schema, from),
    versions: { ...from.versions },
    results: [],
    interrupts: [],
  };
}

function emitCheckpoint(
  exec: Execution,
  checkpoint: CheckpointRecord,
  values: Record<string, unknown>,
): void {
  if (exec.sink.wants("checkpoints"))
    exec.sink.push({
      type: "checkpoints",
      namespace: [...exec.namespace],
      checkpointId: checkpoint.id,
      step: checkpoint.step,
      next: checkpoint.next.map((t) => t.node),
    });
  if (exec.sink.wants("values"))
    exec.sink.push({ type: "values", namespace: [...exec.namespace], values: { ...values } });
}

/**
 * Refuses input that names a channel the state does not have, before anything is stored.
 *
 * @throws InvalidInputError naming the channel and the state's channels.
 */
export function checkInputChannels(
  definition: GraphDefinition,
  input: Record<string, unknown>,
): void {
  for (const [channel, value] of Object.entries(input))
    if (value !== undefined && !(channel in definition.schema))
      throw new InvalidInputError(
        `Input names unknown channel "${channel}"; the state has ${Object.keys(definition.schema).join(", ")}.`,
        { channel },
      );
}

/** The JSON shape of a failure recorded on a run. */
export function describeError(error: unknown, node?: string): NonNullable<RunRecord["error"]> {
  const base =
    error instanceof Error
      ? { name: error.name, message: error.message }
      : { name: "Error", message: String(error) };
  return {
    ...base,
    ...(ReinError.is(error) ? { code: error.code } : {}),
    ...(node ? { node } : {}),
    ...modelFailureDetails(error),
  };
}

/**
 * A failed model answer keeps its details on the run (the provider's error code, the response
 * id, whether a retry may succeed), so a caller can tell a rate limit from a cut stream.
 */
export function modelFailureDetails(error: unknown): { details?: Record<string, unknown> } {
  return ReinError.is(error) && error.code === ErrorCodes.MODEL_FAILED
    ? { details: error.details }
    : {};
}

/** A new root run row. */
export function newRootRun(
  threadId: ThreadId,
  graph: string,
  options: RunRecord["options"],
  runId: RunId = newRunId(),
  requester: string | null,
  now: string,
): RunRecord {
  return {
    runId,
    threadId,
    parentRunId: null,
    parentTaskId: null,
    graph,
    namespace: [],
    stream: ROOT_STREAM,
    status: "running",
    createdAt: now,
    updatedAt: now,
    error: null,
    options: options ?? null,
    ...(requester !== null ? { requester } : {}),
  };
}
