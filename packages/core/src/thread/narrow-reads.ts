/**
 * The runtime's narrow reads on any store: through the store's `narrowReads` capability when it
 * declares it, else picked from the whole reads every runtime store has. The answers are the
 * same; only their cost grows with the thread without the capability.
 */
import { hasCapability } from "../checkpoint/capabilities.ts";
import type {
  PendingPage,
  RuntimeStore,
  StoredInterrupt,
  StreamKey,
  TaskResultKind,
} from "../checkpoint/types.ts";
import type { CheckpointId, TaskId, ThreadId } from "../ids.ts";

/** The oldest `limit` pending interrupts of a thread and the count of all its pending ones. */
export async function pendingPageOf(
  store: RuntimeStore,
  threadId: ThreadId,
  limit: number,
): Promise<PendingPage> {
  if (hasCapability(store, "narrowReads")) return store.getPendingInterrupts(threadId, limit);
  const pending = await store.getThreadInterrupts(threadId, "pending");
  return { items: pending.slice(0, Math.max(0, limit)), total: pending.length };
}

/** The interrupt rows of the given tasks of a thread (every status), oldest first. */
export async function taskInterruptsOf(
  store: RuntimeStore,
  threadId: ThreadId,
  taskIds: readonly TaskId[],
): Promise<StoredInterrupt[]> {
  if (hasCapability(store, "narrowReads")) return store.getTaskInterrupts(threadId, taskIds);
  if (taskIds.length === 0) return [];
  const wanted = new Set<string>(taskIds);
  return (await store.getThreadInterrupts(threadId)).filter((row) => wanted.has(row.taskId));
}

/** The kind of each recorded result of the step that starts at `checkpointId`. */
export async function taskResultKindsOf(
  store: RuntimeStore,
  threadId: ThreadId,
  stream: StreamKey,
  checkpointId: CheckpointId,
): Promise<TaskResultKind[]> {
  if (hasCapability(store, "narrowReads"))
    return store.getTaskResultKinds(threadId, stream, checkpointId);
  return (await store.getTaskResults(threadId, stream, checkpointId)).map(({ taskId, kind }) => ({
    taskId,
    kind,
  }));
}
