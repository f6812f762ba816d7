/**
 * Waking tasks: which paused tasks an answer makes runnable again, and which root runs it moves
 * back to `running`. Both go into the answer's atomic batch.
 */
import type { StoredInterrupt, TaskRef } from "../checkpoint/types.ts";
import type { CheckpointId, RunId } from "../ids.ts";
import type { ThreadSession } from "../thread/session.ts";

/**
 * Tasks an answer wakes: the interrupt's own task and every ancestor task on its run-tree path
 * (a parent task whose child run paused), each at the head of its stream.
 */
export async function tasksToWake(
  session: ThreadSession,
  records: readonly StoredInterrupt[],
): Promise<TaskRef[]> {
  const refs = new Map<string, TaskRef>();
  const heads = new Map<string, CheckpointId | null>();
  const headOf = async (stream: string): Promise<CheckpointId | null> => {
    if (!heads.has(stream)) heads.set(stream, (await session.head(stream))?.id ?? null);
    return heads.get(stream) ?? null;
  };
  for (const record of records) {
    if (record.kind !== "after")
      refs.set(`${record.stream}|${record.taskId}`, {
        stream: record.stream,
        checkpointId: record.checkpointId,
        taskId: record.taskId,
      });
    for (const entry of record.path.slice(0, -1)) {
      const run = await session.run(entry.runId);
      if (!run) continue;
      const head = await headOf(run.stream);
      if (head)
        refs.set(`${run.stream}|${entry.taskId}`, {
          stream: run.stream,
          checkpointId: head,
          taskId: entry.taskId,
        });
    }
  }
  return [...refs.values()];
}

/**
 * The root runs of `answered`: the answer's batch moves each one still `interrupted` to
 * `running`, a status change the store makes itself, so no run row is read first.
 */
export function rootRunsResumedBy(answered: readonly StoredInterrupt[]): RunId[] {
  return [...new Set(answered.map((i) => i.path[0]?.runId ?? i.runId))];
}
