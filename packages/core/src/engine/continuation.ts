/**
 * Continuing a stream from its head: the loop state of a step that already started. What is read
 * scales with what will run, not with the width of the step: when 1,000 parallel tasks wait on
 * answers and one is answered, the continuation decodes that task's interrupts, not the others'.
 */
import type { CheckpointRecord, TaskSpec } from "../checkpoint/types.ts";
import type { GraphDefinition, RunSelectors } from "../graph/definition.ts";
import type { TaskId } from "../ids.ts";
import type { Execution } from "./execution.ts";
import { stepStart, type LoopState } from "./loop.ts";

/**
 * The loop state at `head` for a run that continues its step: the values, each task's recorded
 * result, and the interrupt rows the tasks that will run (and the `after` check) look at.
 */
export async function continueAt(
  definition: GraphDefinition,
  exec: Execution,
  head: CheckpointRecord,
  selectors: RunSelectors,
): Promise<LoopState> {
  // The values do not depend on the task rows: both reads go out at once (two round trips in
  // flight on a networked store instead of one after the other).
  const [values, tasks] = await Promise.all([
    exec.session.values(definition.schema, head),
    taskRows(exec, head, selectors),
  ]);
  return { head, values, versions: { ...head.versions }, ...tasks };
}

/** Steps of at most this many tasks read their interrupt rows before knowing which will run. */
const NARROW_STEP = 8;

/** The recorded results of the head's step and the interrupt rows the loop matches. */
async function taskRows(
  exec: Execution,
  head: CheckpointRecord,
  selectors: RunSelectors,
): Promise<Pick<LoopState, "results" | "interrupts" | "ready">> {
  const store = exec.store;
  // A narrow step reads its tasks' interrupt rows alongside the result kinds (one round trip on a
  // networked store instead of two); a wide one waits for the kinds to read only the rows of the
  // tasks that will run, so one answer among 1,000 paused tasks does not read the other 999.
  const narrow = selectors.after.length === 0 && head.next.length <= NARROW_STEP;
  const [kinds, stepRows] = await Promise.all([
    store.getTaskResultKinds(exec.threadId, exec.stream, head.id),
    narrow
      ? interruptsToMatch(
          exec,
          head,
          selectors,
          head.next.map((task) => task.id),
        )
      : undefined,
  ]);
  const ready = stepStart(head, kinds);
  // While a task of the step stays paused the loop stops before the barrier, so the writes of
  // the finished tasks are never applied in this call: their bodies are read only when every
  // task can finish (once per step, at its last answer), and not at all when there are none.
  // The loop starts from `ready` instead of walking the step's results again.
  const [results, interrupts] = await Promise.all([
    ready.paused || kinds.length === 0
      ? []
      : store.getTaskResults(exec.threadId, exec.stream, head.id),
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
  const atHead = (row: LoopState["interrupts"][number]): boolean =>
    row.checkpointId === head.id && row.stream === exec.stream;
  if (selectors.after.length > 0)
    return (await exec.session.interruptsOfRun(exec.runId)).filter(atHead);
  if (toRun.length === 0) return [];
  return (await exec.store.getTaskInterrupts(exec.threadId, toRun)).filter(atHead);
}
