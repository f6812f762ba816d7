/**
 * The one check both protocol versions make before a run from a past checkpoint (LangGraph's
 * time travel, Rein's fork): the checkpoint is one of the thread's root checkpoints, and the
 * thread waits on no answers — a fork would leave its questions pending on a branch the thread no
 * longer follows. Nothing is written either way.
 */
import {
  NotFoundError,
  ROOT_STREAM,
  ThreadInterruptedError,
  type CheckpointId,
  type Checkpointer,
  type ThreadId,
} from "@rein/core";
import { toPublicInterrupt } from "@rein/core/store";

/**
 * Checks that `threadId` can run again from `checkpointId`.
 *
 * @throws NotFoundError (`what: "checkpoint"`) for a checkpoint the thread does not have;
 *   ThreadInterruptedError while the thread has pending interrupts.
 */
export async function checkForkPoint(
  store: Pick<Checkpointer, "getCheckpoint" | "getThreadInterrupts">,
  threadId: ThreadId,
  checkpointId: string,
): Promise<void> {
  const at = await store.getCheckpoint(threadId, ROOT_STREAM, checkpointId as CheckpointId);
  if (!at) throw new NotFoundError("checkpoint", checkpointId);
  const pending = await store.getThreadInterrupts(threadId, "pending");
  if (pending.length > 0)
    throw new ThreadInterruptedError(threadId, pending.map(toPublicInterrupt));
}
