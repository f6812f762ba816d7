/**
 * Continuing a stream from its head: the loop state of a step that already started. What is read
 * scales with what will run, not with the width of the step: when 1,000 parallel tasks wait on
 * answers and one is answered, the continuation decodes that task's interrupts, not the others'.
 */
import type { Schema } from "../channels.ts";
import type {
  CheckpointRecord,
  ContinuationAsk,
  StepKinds,
  StoredInterrupt,
  StreamKey,
  TaskResultKind,
  TaskSpec,
} from "../checkpoint/types.ts";
import type { GraphDefinition, RunSelectors } from "../graph/definition.ts";
import type { TaskId } from "../ids.ts";
import { ROOT_STREAM } from "../keys.ts";
import { hasCapability } from "../checkpoint/capabilities.ts";
import type { ThreadSession } from "../thread/session.ts";
import { taskInterruptsOf, taskResultKindsOf } from "../thread/narrow-reads.ts";
import type { Execution } from "./execution.ts";
import { stepStart, type LoopState, type StepStart } from "./loop.ts";

/**
 * The first reads of a continuation at `head`, all in flight at once: the values, the kinds of
 * the step's recorded results and, for a narrow step, its tasks' interrupt rows at the head.
 * They can be started before the call knows `head` is still the head (see `runRoot`): they are
 * used only when it is.
 */
export interface ContinuationReads {
  readonly head: CheckpointRecord;
  readonly values: Promise<Record<string, unknown>>;
  readonly kinds: Promise<StepRead>;
  /** The step's interrupt rows at the head; only for a narrow step without `after` selectors. */
  readonly stepRows: Promise<StoredInterrupt[]> | undefined;
}

/** Where the step at a head stands, from the kinds of its recorded results. */
interface StepRead {
  /** The tasks still to run, and whether one stays paused. */
  readonly ready: StepStart;
  /** How many results the step has recorded (their bodies are read only when there are some). */
  readonly recorded: number;
}

/** Steps of at most this many tasks read their interrupt rows before knowing which will run. */
const NARROW_STEP = 8;

/**
 * Whether the step at `head` reads its tasks' interrupt rows alongside the result kinds (one
 * round trip on a networked store instead of two). A wide step waits for the kinds to read only
 * the rows of the tasks that will run, so one answer among 1,000 paused tasks does not read the
 * other 999; a run with `after` selectors reads its rows per run, later.
 */
function readsRowsEarly(head: CheckpointRecord, afterSelectors: boolean): boolean {
  return !afterSelectors && head.next.length <= NARROW_STEP;
}

/** Whether an interrupt row belongs to `head` of `stream` (a task id recurs across steps). */
function atHead(head: CheckpointRecord, stream: StreamKey): (row: StoredInterrupt) => boolean {
  return (row) => row.checkpointId === head.id && row.stream === stream;
}

/**
 * What a continuation of the root stream at `head` reads first, for a store to read after an
 * answer in the answer's round trip: as {@link startContinuationReads} would for a run without
 * `after` selectors (`continueAt` checks that guess).
 */
export function continuationAsk(head: CheckpointRecord): ContinuationAsk {
  return readsRowsEarly(head, false)
    ? { head, taskIds: head.next.map((task) => task.id) }
    : { head };
}

/**
 * Starts the first reads of a continuation of `stream` at `head`. `afterSelectors` says whether
 * the run selects `after` pauses (their rows are read per run, later, not here).
 *
 * A read started early may end unused (the head moved): its failure is then nobody's, so every
 * promise is marked handled here; whoever awaits it still gets the error.
 */
export function startContinuationReads(
  session: ThreadSession,
  schema: Schema,
  stream: StreamKey,
  head: CheckpointRecord,
  afterSelectors: boolean,
): ContinuationReads {
  const handled = <T>(promise: Promise<T>): Promise<T> => {
    promise.catch(() => undefined);
    return promise;
  };
  // Made by the answer's round trip already (the same reads, after the answer).
  const made = stream === ROOT_STREAM ? session.takeContinuation(head) : undefined;
  if (made && (made.taskInterrupts !== undefined) === readsRowsEarly(head, afterSelectors))
    return {
      head,
      values: Promise.resolve(session.valuesOf(schema, made.values)),
      kinds: Promise.resolve(fromKinds(head, made.kinds)),
      stepRows:
        made.taskInterrupts && Promise.resolve(made.taskInterrupts.filter(atHead(head, stream))),
    };
  return {
    head,
    values: handled(session.values(schema, head)),
    kinds: handled(readStep(session, stream, head)),
    stepRows: readsRowsEarly(head, afterSelectors)
      ? handled(
          rowsAtHead(
            session,
            stream,
            head,
            head.next.map((task) => task.id),
          ),
        )
      : undefined,
  };
}

/** Where the step stands, from the kinds of every recorded result. */
function fromKinds(head: CheckpointRecord, kinds: readonly TaskResultKind[]): StepRead {
  return { ready: stepStart(head, kinds), recorded: kinds.length };
}

/**
 * Reads where the step at `head` stands. After this call's answer, only the woken tasks' results
 * are asked for, with counts over the step (a store may answer so): one answer among 1,000
 * paused tasks then reads what one among ten does, not every other task's kind.
 */
async function readStep(
  session: ThreadSession,
  stream: StreamKey,
  head: CheckpointRecord,
): Promise<StepRead> {
  const { store, threadId } = session;
  const focus = session.wokenAt(stream, head.id);
  if (focus && hasCapability(store, "narrowReads")) {
    const read = await store.getTaskResultKinds(threadId, stream, head.id, focus);
    if (Array.isArray(read)) return fromKinds(head, read);
    const ready = fromSummary(head, focus, read);
    if (ready) return { ready, recorded: read.recorded };
  }
  return fromKinds(head, await taskResultKindsOf(store, threadId, stream, head.id));
}

/**
 * The step's start from a {@link StepKinds} summary about `focus`: the focus tasks without a
 * result run. `undefined` when another task has no result either (a crash mid-step): only the
 * full list names it.
 */
function fromSummary(
  head: CheckpointRecord,
  focus: readonly TaskId[],
  summary: StepKinds,
): StepStart | undefined {
  const wanted = new Set<string>(focus);
  const recorded = new Set<string>(summary.focus.map((kind) => kind.taskId));
  const unrecorded: TaskSpec[] = [];
  let others = 0;
  for (let i = 0; i < head.next.length; i++) {
    const task = head.next[i] as TaskSpec;
    if (!wanted.has(task.id)) others += 1;
    else if (!recorded.has(task.id)) unrecorded.push(task);
  }
  if (summary.recorded - summary.focus.length !== others) return undefined;
  return { unrecorded, paused: summary.paused };
}

/**
 * The loop state at `head` for a run that continues its step: the values, each task's recorded
 * result, and the interrupt rows the tasks that will run (and the `after` check) look at.
 * `early` are reads started before the call knew its head: used when they were for this head
 * and the same selectors, else started now.
 */
export async function continueAt(
  definition: GraphDefinition,
  exec: Execution,
  head: CheckpointRecord,
  selectors: RunSelectors,
  early?: ContinuationReads,
): Promise<LoopState> {
  const afterSelectors = selectors.after.length > 0;
  const reads =
    early !== undefined &&
    early.head === head &&
    (early.stepRows !== undefined) === readsRowsEarly(head, afterSelectors)
      ? early
      : startContinuationReads(exec.session, definition.schema, exec.stream, head, afterSelectors);
  // The values do not depend on the task rows: both reads go out at once (two round trips in
  // flight on a networked store instead of one after the other).
  const [values, tasks] = await Promise.all([reads.values, taskRows(exec, head, selectors, reads)]);
  return { head, values, versions: { ...head.versions }, ...tasks };
}

/** The recorded results of the head's step and the interrupt rows the loop matches. */
async function taskRows(
  exec: Execution,
  head: CheckpointRecord,
  selectors: RunSelectors,
  reads: ContinuationReads,
): Promise<Pick<LoopState, "results" | "interrupts" | "ready">> {
  const store = exec.store;
  const [{ ready, recorded }, stepRows] = await Promise.all([reads.kinds, reads.stepRows]);
  // While a task of the step stays paused the loop stops before the barrier, so the writes of
  // the finished tasks are never applied in this call: their bodies are read only when every
  // task can finish (once per step, at its last answer), and not at all when there are none.
  // The loop starts from `ready` instead of walking the step's results again.
  const [results, interrupts] = await Promise.all([
    ready.paused || recorded === 0 ? [] : store.getTaskResults(exec.threadId, exec.stream, head.id),
    interruptsOfRunning(exec, head, selectors, ready.unrecorded, stepRows),
  ]);
  return { results, interrupts, ready };
}

/** The interrupt rows of the tasks that will run: picked from `stepRows` when read already. */
async function interruptsOfRunning(
  exec: Execution,
  head: CheckpointRecord,
  selectors: RunSelectors,
  running: readonly TaskSpec[],
  stepRows: LoopState["interrupts"] | undefined,
): Promise<LoopState["interrupts"]> {
  const ids = running.map((task) => task.id);
  if (stepRows === undefined) return interruptsToMatch(exec, head, selectors, ids);
  const wanted = new Set<string>(ids);
  return stepRows.filter((row) => wanted.has(row.taskId));
}

/**
 * Interrupt rows of the head checkpoint that the loop matches: those of the tasks that will run
 * (their answers, and their `before` rows). An `after` pause belongs to a task of the previous
 * step, so a run that selects `after` pauses reads its own rows at the head, as it did before.
 */
async function interruptsToMatch(
  exec: Execution,
  head: CheckpointRecord,
  selectors: RunSelectors,
  toRun: readonly TaskId[],
): Promise<LoopState["interrupts"]> {
  if (selectors.after.length > 0)
    return (await exec.session.interruptsOfRun(exec.runId)).filter(atHead(head, exec.stream));
  return rowsAtHead(exec.session, exec.stream, head, toRun);
}

/** The interrupt rows of tasks `toRun` that belong to `head` of `stream`. */
async function rowsAtHead(
  session: ThreadSession,
  stream: StreamKey,
  head: CheckpointRecord,
  toRun: readonly TaskId[],
): Promise<StoredInterrupt[]> {
  if (toRun.length === 0) return [];
  return (await taskInterruptsOf(session.store, session.threadId, toRun)).filter(
    atHead(head, stream),
  );
}
