/**
 * The superstep loop of one run (root or child): run the runnable tasks of the head checkpoint
 * concurrently, record each outcome, and at the barrier commit one checkpoint atomically.
 *
 * A run stops when no task is left (done), when a task paused and nothing else can run
 * (interrupted), when a task failed (error) or when the signal aborted (cancelled). Paused tasks
 * whose interrupts were not answered are never re-executed: only tasks without a result run.
 */
import { traceStep } from "../telemetry/runtime-spans.ts";
import type {
  CheckpointRecord,
  StoredInterrupt,
  TaskResult,
  TaskSpec,
} from "../checkpoint/types.ts";
import { InvalidUpdateError, NonSerializableError, RecursionLimitError } from "../errors.ts";
import type { GraphDefinition, RunSelectors } from "../graph/definition.ts";
import { newCheckpointId } from "../ids.ts";
import { encodeTrigger } from "../keys.ts";
import { selects, staticInterrupt } from "../interrupts/static.ts";
import type { RunResult } from "../types.ts";
import { applyWrites, scheduleNext } from "./barrier.ts";
import { emitInterrupt } from "./events.ts";
import type { Execution } from "./execution.ts";
import { runTask, type RunEnd, type SettledTask } from "./task.ts";

/** Mutable position of a loop: the head and the state it references. */
export interface LoopState {
  head: CheckpointRecord;
  values: Record<string, unknown>;
  versions: Record<string, string>;
  /** Results already recorded for the head's step. */
  results: TaskResult[];
  /** Interrupt rows attached to the head checkpoint (all statuses). */
  interrupts: StoredInterrupt[];
  /**
   * What a continuation already worked out about the head's step, so the loop's first pass does
   * not walk every task of a wide step again: the tasks without a result, and whether a task of
   * the step is still paused (then `results` may leave out the tasks that have one: the step
   * cannot reach its barrier in this call).
   */
  ready?: StepStart | undefined;
}

/** The tasks of a step that have no result yet, and whether any task of it is paused. */
export interface StepStart {
  unrecorded: TaskSpec[];
  paused: boolean;
}

/** How a loop ended. */
export interface LoopOutcome {
  status: RunResult["status"];
  error?: unknown;
  failedNode?: string;
}

/** Settings of a loop. */
export interface LoopOptions {
  definition: GraphDefinition;
  exec: Execution;
  selectors: RunSelectors;
  /** Called before the commit that ends the run (`done`): what that commit also carries. */
  runEndAtCommit?: () => RunEnd;
  /**
   * Called when the only task of a step pauses, which ends the run `interrupted`: what the pause
   * write also carries, instead of a write of its own.
   */
  runEndAtPause?: () => RunEnd;
}

/** Runs supersteps from `state.head` until the run ends or pauses. `state` is updated in place. */
export async function runLoop(options: LoopOptions, state: LoopState): Promise<LoopOutcome> {
  const { exec, definition } = options;
  let steps = 0;
  for (;;) {
    const head = state.head;
    if (exec.aborted) return { status: "cancelled" };
    // An `after` pause holds even when the paused node was the last one.
    if (
      state.interrupts.some(
        (i) => i.kind === "after" && i.status === "pending" && i.checkpointId === head.id,
      )
    )
      return { status: "interrupted" };
    if (head.next.length === 0) return { status: "done" };
    if (steps++ >= definition.recursionLimit)
      return { status: "error", error: new RecursionLimitError(definition.recursionLimit) };

    const start = state.ready ?? stepStart(head, state.results);
    state.ready = undefined;
    const toRun: TaskSpec[] = [];
    let paused = start.paused;
    for (const task of start.unrecorded) {
      if (
        selects(options.selectors.before, exec.namespace, task.node) &&
        !(await passBefore(exec, state, task))
      ) {
        paused = true;
        continue;
      }
      toRun.push(task);
    }

    const outcomes = await runTasks(options, state, toRun, paused);
    let failure: SettledTask | undefined;
    for (const outcome of outcomes) {
      if (outcome.kind === "paused") {
        paused = true;
        state.interrupts.push(...outcome.created);
      } else if (outcome.kind === "error") failure ??= outcome;
      if (outcome.result) state.results.push(outcome.result);
    }
    // An abort wins over a task's failure: a client that rejects because it was aborted (or
    // any task failing after the abort) does not turn a cancellation into an error.
    if (exec.aborted) return { status: "cancelled" };
    if (failure?.kind === "error")
      return { status: "error", error: failure.error, failedNode: failure.task.node };
    if (paused) return { status: "interrupted" };

    const writes = stepWrites(head, state.results);
    try {
      await commitBarrier(options, state, writes);
    } catch (error) {
      if (error instanceof InvalidUpdateError || error instanceof NonSerializableError)
        return { status: "error", error };
      throw error;
    }
  }
}

/** The recorded writes of the head's step, in the order of its tasks (the barrier's order). */
function stepWrites(
  head: CheckpointRecord,
  results: readonly TaskResult[],
): Extract<TaskResult, { kind: "writes" }>[] {
  const writes: Extract<TaskResult, { kind: "writes" }>[] = [];
  // Most steps have one task and one result: no index for those.
  if (head.next.length === 1 && results.length === 1) {
    const only = results[0] as TaskResult;
    if (only.kind === "writes" && only.taskId === head.next[0]?.id) writes.push(only);
    return writes;
  }
  const recorded = new Map<string, TaskResult>();
  for (const r of results) recorded.set(r.taskId, r);
  for (let i = 0; i < head.next.length; i++) {
    const result = recorded.get((head.next[i] as TaskSpec).id);
    if (result?.kind === "writes") writes.push(result);
  }
  return writes;
}

/**
 * The tasks of the head's step without a recorded result, and whether one of them paused, from
 * the results (or only their kinds) recorded so far.
 */
export function stepStart(
  head: CheckpointRecord,
  recorded: readonly Pick<TaskResult, "taskId" | "kind">[],
): StepStart {
  // Nothing recorded (a step's first run): every task is still to run.
  if (recorded.length === 0) return { unrecorded: [...head.next], paused: false };
  const has = new Set<string>();
  let paused = false;
  for (const r of recorded) {
    has.add(r.taskId);
    if (r.kind === "paused") paused = true;
  }
  // An indexed loop, not `filter`: a head kept by the head cache is a frozen array, which the
  // array builtins walk on their slow path (twice the time at 1,000 tasks).
  const unrecorded: TaskSpec[] = [];
  for (let i = 0; i < head.next.length; i++) {
    const task = head.next[i] as TaskSpec;
    if (!has.has(task.id)) unrecorded.push(task);
  }
  return { unrecorded, paused };
}

/** Runs the runnable tasks of the head's step concurrently, each to an outcome. */
function runTasks(
  options: LoopOptions,
  state: LoopState,
  toRun: TaskSpec[],
  othersPaused: boolean,
): Promise<SettledTask[]> {
  const { exec, definition } = options;
  const head = state.head;
  // A single-task step needs no separate task record: its commit is the record. With several
  // tasks, each finished task's writes are stored as it finishes, so a crash mid-step loses
  // none of them and a finished task never runs again.
  const persistEach = head.next.length > 1;
  // A pause of the step's only task ends the run: its run row can go with the pause.
  const runEndAtPause = head.next.length === 1 && !othersPaused ? options.runEndAtPause : undefined;
  return traceStep(exec, head.step + 1, () =>
    Promise.all(
      toRun.map((task) =>
        runTask({
          exec,
          definition,
          head,
          task,
          values: state.values,
          interrupts: state.interrupts,
          persist: persistEach,
          runEndAtPause,
        }),
      ),
    ),
  );
}

async function commitBarrier(
  options: LoopOptions,
  state: LoopState,
  writes: Extract<TaskResult, { kind: "writes" }>[],
): Promise<void> {
  const { exec, definition } = options;
  const head = state.head;
  const id = newCheckpointId(head.id);
  const barrier = applyWrites(definition, state.values, state.versions, writes, id);
  const step = head.step + 1;
  const next = await scheduleNext(definition, exec, writes, barrier.values, step + 1);
  const checkpoint: CheckpointRecord = {
    threadId: exec.threadId,
    stream: exec.stream,
    id,
    parentId: head.id,
    runId: exec.runId,
    step,
    versions: barrier.versions,
    next,
    source: "loop",
    createdAt: exec.session.now(),
    metadata: { writers: barrier.writers },
  };
  const afterInterrupts: StoredInterrupt[] = [];
  // Most runs select no `after` pause: skip the scan of every step's writes then.
  if (options.selectors.after.length > 0)
    for (const w of writes)
      if (selects(options.selectors.after, exec.namespace, w.node))
        afterInterrupts.push(
          staticInterrupt(exec, "after", id, {
            id: w.taskId,
            node: w.node,
            trigger: encodeTrigger({ kind: "edge" }),
          }),
        );
  await exec.store.commitStep({
    checkpoint,
    expectedHeadId: head.id,
    blobs: barrier.blobs,
    interrupts: afterInterrupts,
    ...(next.length === 0 && afterInterrupts.length === 0 ? options.runEndAtCommit?.() : {}),
  });
  state.head = checkpoint;
  state.values = barrier.values;
  state.versions = barrier.versions;
  state.results = [];
  state.interrupts = afterInterrupts;
  emitStep(exec, writes, checkpoint, barrier.values);
  for (const interrupt of afterInterrupts) emitInterrupt(exec.sink, interrupt);
}

function emitStep(
  exec: Execution,
  writes: Extract<TaskResult, { kind: "writes" }>[],
  checkpoint: CheckpointRecord,
  values: Record<string, unknown>,
): void {
  const sink = exec.sink;
  if (sink.wants("updates"))
    for (const w of writes)
      sink.push({
        type: "updates",
        namespace: [...exec.namespace],
        node: w.node,
        taskId: w.taskId,
        update: Object.fromEntries(w.writes),
      });
  if (sink.wants("checkpoints"))
    sink.push({
      type: "checkpoints",
      namespace: [...exec.namespace],
      checkpointId: checkpoint.id,
      step: checkpoint.step,
      next: checkpoint.next.map((t) => t.node),
    });
  if (sink.wants("values"))
    sink.push({ type: "values", namespace: [...exec.namespace], values: { ...values } });
}

/**
 * A task selected by `interruptBefore` runs only once its `before` interrupt was answered; the
 * first time, the interrupt is raised and the task recorded as paused.
 */
async function passBefore(exec: Execution, state: LoopState, task: TaskSpec): Promise<boolean> {
  const existing = state.interrupts.find(
    (i) => i.taskId === task.id && i.kind === "before" && i.checkpointId === state.head.id,
  );
  if (existing) return existing.status === "answered";
  const record = staticInterrupt(exec, "before", state.head.id, task);
  await exec.store.putTaskOutcome({
    threadId: exec.threadId,
    stream: exec.stream,
    checkpointId: state.head.id,
    result: { kind: "paused", taskId: task.id, node: task.node },
    interrupts: [record],
    superseded: [],
  });
  state.interrupts.push(record);
  state.results.push({ kind: "paused", taskId: task.id, node: task.node });
  emitInterrupt(exec.sink, record);
  return false;
}
