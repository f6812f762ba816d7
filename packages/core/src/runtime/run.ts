/**
 * Starting and continuing runs: loading the head of a stream, applying input, running the loop,
 * recording the run's status.
 */
import type {
  Checkpointer,
  CheckpointRecord,
  RunRecord,
  StoredInterrupt,
} from "../checkpoint/types.ts";
import { InvalidInputError, ReinError, ThreadInterruptedError } from "../errors.ts";
import {
  newCheckpointId,
  newRunId,
  taskIdFor,
  type CheckpointId,
  type RunId,
  type ThreadId,
} from "../ids.ts";
import { START, type GraphShape } from "../graph/state-graph.ts";
import { applyWrites, scheduleNext } from "./barrier.ts";
import type { Execution } from "./execution.ts";
import { toPublicInterrupt } from "./interrupt-records.ts";
import { runLoop, type LoopOutcome, type LoopState, type RunSelectors } from "./loop.ts";

/** What a run needs to know about its graph. */
export interface GraphRuntime {
  shape: GraphShape;
  name: string;
  recursionLimit: number;
}

/** Reads the values a checkpoint references (missing channels take their initial value). */
export async function loadValues(
  saver: Checkpointer,
  shape: GraphShape,
  checkpoint: CheckpointRecord | undefined,
): Promise<Record<string, unknown>> {
  const stored =
    checkpoint && Object.keys(checkpoint.versions).length > 0
      ? await saver.getChannelValues(checkpoint.threadId, checkpoint.stream, checkpoint.versions)
      : {};
  const values: Record<string, unknown> = {};
  for (const [name, channel] of Object.entries(shape.schema))
    values[name] = name in stored ? stored[name] : channel.initial();
  return values;
}

/**
 * Interrupt rows of one run (all statuses), through the store's run index: a run reads its own
 * rows, not the thread's, so resuming one of 1,000 paused children stays cheap.
 */
export async function interruptsOfRun(
  saver: Checkpointer,
  threadId: ThreadId,
  runId: RunId,
  status?: StoredInterrupt["status"],
): Promise<StoredInterrupt[]> {
  const rows: StoredInterrupt[] = [];
  let cursor: string | null = null;
  do {
    const page = await saver.listInterrupts({
      threadId,
      runId,
      limit: 1000,
      cursor,
      ...(status ? { status } : {}),
    });
    rows.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return rows;
}

/** Everything a stream run needs to start or continue. */
export interface StreamRunInput {
  graph: GraphRuntime;
  exec: Execution;
  selectors: RunSelectors;
  /** Input to apply (a new run of this stream), or `undefined` to continue from the head. */
  input: Record<string, unknown> | undefined;
  /** Start from this checkpoint instead of the head (fork / replay). */
  fromCheckpointId?: CheckpointId | undefined;
  /** The stream's head when the caller already read it (saves a round trip). */
  head?: CheckpointRecord | undefined;
  /** The run row to keep up to date. */
  run: RunRecord;
  /**
   * Whether the run row must still be written as `running`. When the call applies input, the
   * row goes with the input checkpoint's commit instead of a write of its own.
   */
  writeRunRow?: boolean;
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
export async function runStream(input: StreamRunInput): Promise<StreamRunOutcome> {
  const { exec, graph } = input;
  const saver = exec.saver;
  let head =
    input.head && !input.fromCheckpointId
      ? input.head
      : await saver.getCheckpoint(exec.threadId, exec.stream, input.fromCheckpointId);
  if (input.fromCheckpointId && !head)
    throw new InvalidInputError(
      `Checkpoint ${input.fromCheckpointId} does not exist on this thread.`,
      { checkpointId: input.fromCheckpointId },
    );
  let state: LoopState;
  const runRow = input.writeRunRow ? input.run : undefined;
  if (runRow && !(input.input !== undefined || !head)) await saver.putRun(runRow);
  if (input.input !== undefined || !head) {
    const currentHead = input.fromCheckpointId
      ? await saver.getCheckpoint(exec.threadId, exec.stream)
      : head;
    state = await applyInput(
      graph,
      exec,
      head,
      currentHead?.id ?? null,
      input.input ?? {},
      input.fromCheckpointId ? "fork" : "input",
      runRow,
    );
    head = state.head;
  } else if (input.fromCheckpointId) {
    // Replaying from a past checkpoint: copy it to a new head so history forks instead of rewriting.
    state = await forkAt(graph, exec, head);
  } else {
    const at = head;
    state = {
      head: at,
      values: await loadValues(saver, graph.shape, at),
      versions: { ...at.versions },
      results: await saver.getTaskResults(exec.threadId, exec.stream, at.id),
      interrupts: (await interruptsOfRun(saver, exec.threadId, exec.runId)).filter(
        (row) => row.checkpointId === at.id && row.stream === exec.stream,
      ),
    };
  }
  const run = input.run;
  let doneCommitted = false;
  const outcome = await runLoop(
    {
      shape: graph.shape,
      exec,
      selectors: input.selectors,
      recursionLimit: graph.recursionLimit,
      // The last step's commit carries the `done` run row, so finishing costs no extra write.
      runRowsAtCommit: () => {
        doneCommitted = true;
        return [{ ...run, status: "done", updatedAt: new Date().toISOString(), error: null }];
      },
    },
    state,
  );
  // A lost lease aborted the run: another process owns the thread now, so record nothing (the
  // write would be refused, or would mark a healthy run cancelled after a store outage).
  exec.lease?.assertHeld();
  if (!(outcome.status === "done" && doneCommitted)) {
    const error =
      outcome.error === undefined ? null : describeError(outcome.error, outcome.failedNode);
    await saver.putRun({
      ...run,
      status: outcome.status,
      updatedAt: new Date().toISOString(),
      error,
    });
  }
  return { outcome, state };
}

async function applyInput(
  graph: GraphRuntime,
  exec: Execution,
  base: CheckpointRecord | undefined,
  expectedHeadId: CheckpointId | null,
  input: Record<string, unknown>,
  source: "input" | "fork",
  runRow: RunRecord | undefined,
): Promise<LoopState> {
  const saver = exec.saver;
  const values = await loadValues(saver, graph.shape, base);
  const id = newCheckpointId(expectedHeadId);
  const writes = Object.entries(input).filter(([, v]) => v !== undefined);
  checkInputChannels(graph.shape, input);
  const barrier = applyWrites(
    graph.shape,
    values,
    base ? { ...base.versions } : {},
    [{ kind: "writes", taskId: "input" as never, node: START, writes, gotos: [], sends: [] }],
    id,
  );
  const step = base ? base.step + 1 : -1;
  const next = await scheduleNext(graph.shape, exec, [START], barrier.values, step + 1);
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
    createdAt: new Date().toISOString(),
    metadata: { input: Object.keys(input) },
  };
  await saver.commitStep({
    checkpoint,
    expectedHeadId,
    blobs: barrier.blobs,
    ...(runRow ? { runs: [runRow] } : {}),
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
  graph: GraphRuntime,
  exec: Execution,
  from: CheckpointRecord,
): Promise<LoopState> {
  const saver = exec.saver;
  const current = await saver.getCheckpoint(exec.threadId, exec.stream);
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
    createdAt: new Date().toISOString(),
    metadata: { forkedFrom: from.id },
  };
  await saver.commitStep({ checkpoint, expectedHeadId: current?.id ?? null, blobs: [] });
  return {
    head: checkpoint,
    values: await loadValues(saver, graph.shape, from),
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
export function checkInputChannels(shape: GraphShape, input: Record<string, unknown>): void {
  for (const [channel, value] of Object.entries(input))
    if (value !== undefined && !(channel in shape.schema))
      throw new InvalidInputError(
        `Input names unknown channel "${channel}"; the state has ${Object.keys(shape.schema).join(", ")}.`,
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
  };
}

/** Refuses plain input to a thread with pending interrupts, or cancels them when asked to. */
export async function guardPending(
  saver: Checkpointer,
  threadId: ThreadId,
  pending: StoredInterrupt[],
  onPending: "error" | "cancel",
  actor: string,
): Promise<void> {
  if (pending.length === 0) return;
  if (onPending !== "cancel")
    throw new ThreadInterruptedError(threadId, pending.map(toPublicInterrupt));
  const result = await saver.answerInterrupts({
    threadId,
    answers: [],
    cancel: pending.map((p) => p.id),
    wake: [],
    actor,
    action: "cancel",
  });
  if (!result.ok) throw new ThreadInterruptedError(threadId, pending.map(toPublicInterrupt));
  const runIds = new Set(pending.map((p) => p.runId));
  for (const runId of runIds) {
    const run = await saver.getRun(runId);
    if (run && (run.status === "interrupted" || run.status === "running"))
      await saver.putRun({ ...run, status: "cancelled", updatedAt: new Date().toISOString() });
  }
}

/** A new root run row. */
export function newRootRun(
  threadId: ThreadId,
  graph: string,
  options: RunRecord["options"],
  runId: RunId = newRunId(),
): RunRecord {
  const now = new Date().toISOString();
  return {
    runId,
    threadId,
    parentRunId: null,
    parentTaskId: null,
    graph,
    namespace: [],
    stream: "",
    status: "running",
    createdAt: now,
    updatedAt: now,
    error: null,
    options: options ?? null,
  };
}
