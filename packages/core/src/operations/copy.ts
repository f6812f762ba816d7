/**
 * Copying a thread: a new thread whose first checkpoint holds the source's head state exactly —
 * the same channel values (written whole, no reducer applied) and the same next tasks — under a
 * run of its own. The history is not copied: the copy starts at the source's head.
 *
 * Only a thread at rest is copied. A thread waiting on answers is refused: its questions belong
 * to it, and a copy run later would ask them again or, with a sibling's result left behind,
 * run that sibling twice. A thread being run is refused too: its head is about to move.
 */
import type { Checkpointer, RunRecord, ThreadRecord } from "../checkpoint/types.ts";
import { ThreadBusyError, ThreadInterruptedError } from "../errors.ts";
import { newCheckpointId, newRunId, type CheckpointId, type ThreadId } from "../ids.ts";
import { toPublicInterrupt } from "../interrupts/records.ts";
import { ROOT_STREAM } from "../keys.ts";

/** What copying a thread reads and writes. */
export type CopyStore = Pick<
  Checkpointer,
  "getThreadInterrupts" | "getLease" | "getCheckpoint" | "getChannelValues" | "commitStep"
>;

/** The copy's first checkpoint, if the source had one. */
export interface ThreadCopy {
  checkpointId: CheckpointId | null;
}

/**
 * Creates `target` (a thread record not stored yet) as a copy of `source`'s head. A source with
 * no checkpoint yet gives a copy with none; the caller stores the bare thread row then.
 *
 * @throws ThreadInterruptedError while `source` waits on answers; ThreadBusyError while it is
 *   being run. Nothing is written either way.
 */
export async function copyThread(
  store: CopyStore,
  source: ThreadId,
  target: ThreadRecord,
): Promise<ThreadCopy> {
  const pending = await store.getThreadInterrupts(source, "pending");
  if (pending.length > 0) throw new ThreadInterruptedError(source, pending.map(toPublicInterrupt));
  const lease = await store.getLease(source);
  if (lease) throw new ThreadBusyError(source, lease.owner);
  const head = await store.getCheckpoint(source, ROOT_STREAM);
  if (!head) return { checkpointId: null };
  const values = await store.getChannelValues(source, ROOT_STREAM, head.versions);
  const runId = newRunId();
  const id = newCheckpointId(null);
  const now = target.createdAt;
  const run: RunRecord = {
    runId,
    threadId: target.threadId,
    parentRunId: null,
    parentTaskId: null,
    graph: target.graph ?? "",
    namespace: [],
    stream: ROOT_STREAM,
    status: head.next.length === 0 ? "done" : "interrupted",
    createdAt: now,
    updatedAt: now,
    error: null,
    options: null,
  };
  await store.commitStep({
    checkpoint: {
      threadId: target.threadId,
      stream: ROOT_STREAM,
      id,
      parentId: null,
      runId,
      step: head.step,
      versions: head.versions,
      next: head.next,
      source: "fork",
      createdAt: now,
      metadata: { copiedFrom: { threadId: source, checkpointId: head.id } },
    },
    expectedHeadId: null,
    // Every value whole, at the source's versions: the copy reads back exactly the source's
    // state, whatever the channels' reducers.
    blobs: Object.entries(head.versions).map(([channel, version]) => ({
      channel,
      version,
      kind: "full" as const,
      prev: null,
      value: values[channel],
    })),
    thread: target,
    runs: [run],
  });
  return { checkpointId: id };
}
