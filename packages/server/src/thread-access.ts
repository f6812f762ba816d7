/**
 * Reading threads on behalf of a caller: tenant checks (another tenant's thread does not exist
 * for you), the thread view with status and pending interrupts, and the latest metadata that
 * 409 answers carry.
 */
import {
  ROOT_STREAM,
  NotFoundError,
  StaleTargetError,
  type CheckpointId,
  type Interrupt,
  type RunId,
  type RunStatus,
  type ThreadId,
  type ThreadRecord,
} from "@rein/core";
import {
  toPublicInterrupt,
  type LeaseStatusStore,
  type RuntimeStore,
  type ThreadCatalogStore,
  type ThreadHistoryStore,
} from "@rein/core/store";
import type { Thread } from "@rein/wire";
import type { Principal } from "./auth.ts";
import { GraphRegistry } from "./registry.ts";

/** Whether a principal may see a thread of `tenant`. Open mode (`null`) sees every thread. */
export function canSee(principal: Principal, tenant: string | null): boolean {
  return principal.tenant === null || principal.tenant === tenant;
}

/**
 * The thread, if it exists and belongs to the caller's tenant.
 *
 * @throws NotFoundError otherwise (the same answer for both, so ids of other tenants leak nothing).
 */
export async function loadThread(
  store: ThreadCatalogStore,
  principal: Principal,
  threadId: ThreadId,
): Promise<ThreadRecord> {
  const thread = await store.getThread(threadId);
  if (!thread || !canSee(principal, thread.tenant)) throw new NotFoundError("thread", threadId);
  return thread;
}

/**
 * A thread with its root stream's head as one read saw them: what a resume carries from the
 * route to the run, so nothing on the way reads the head again.
 */
export interface ThreadHead {
  thread: ThreadRecord;
  /** The run of the head checkpoint: the run an answer continues (it names the run's hub). */
  runId: RunId | null;
  headCheckpointId: CheckpointId | null;
}

/**
 * The thread (as {@link loadThread}) and the run of its head, in one read: what a resume needs
 * before core runs it (the run's id names the run's event hub).
 *
 * @throws NotFoundError when the thread does not exist or belongs to another tenant.
 */
export async function loadThreadHead(
  store: RuntimeStore,
  principal: Principal,
  threadId: ThreadId,
): Promise<ThreadHead> {
  const read = await store.getThreadHead(threadId, ROOT_STREAM);
  const thread = read.thread;
  if (!thread || !canSee(principal, thread.tenant)) throw new NotFoundError("thread", threadId);
  return {
    thread,
    runId: read.checkpoint?.runId ?? null,
    headCheckpointId: read.checkpoint?.id ?? null,
  };
}

/** What `GET /threads/:id` answers: the wire's {@link Thread}. */
export type ThreadView = Thread;

/** The latest metadata of a thread: head run, its status, head checkpoint, pending interrupts. */
export async function latestMetadata(
  store: RuntimeStore & ThreadHistoryStore,
  threadId: ThreadId,
): Promise<{
  runId: RunId | null;
  runStatus: RunStatus | null;
  headCheckpointId: CheckpointId | null;
  pendingInterrupts: Interrupt[];
}> {
  const head = await store.getCheckpoint(threadId, ROOT_STREAM);
  // Without a head, the thread's first run may be queued or starting: name it.
  const run = head
    ? await store.getRun(head.runId)
    : (await store.listRuns(threadId)).filter((r) => r.parentRunId === null).at(-1);
  const pending = await store.getThreadInterrupts(threadId, "pending");
  return {
    runId: run?.runId ?? null,
    runStatus: run?.status ?? null,
    headCheckpointId: head?.id ?? null,
    pendingInterrupts: pending.map(toPublicInterrupt),
  };
}

/** A thread as the API shows it. */
export async function threadView(
  store: RuntimeStore & ThreadHistoryStore & LeaseStatusStore,
  thread: ThreadRecord,
): Promise<ThreadView> {
  const latest = await latestMetadata(store, thread.threadId);
  const lease = await store.getLease(thread.threadId);
  const status: ThreadView["status"] = lease
    ? "running"
    : latest.pendingInterrupts.length > 0
      ? "interrupted"
      : (latest.runStatus ?? "idle");
  return {
    threadId: thread.threadId,
    graph: (await GraphRegistry.graphNameOf(store, thread)) ?? "",
    tenant: thread.tenant,
    metadata: thread.metadata,
    status,
    runId: latest.runId,
    headCheckpointId: latest.headCheckpointId,
    pendingInterrupts: latest.pendingInterrupts,
    createdAt: thread.createdAt,
    updatedAt: thread.updatedAt,
  };
}

/**
 * Refuses when `expected` is not the head of the thread's root stream (`read`: the head id the
 * caller read just before, if it did).
 *
 * @throws StaleTargetError with the latest metadata.
 */
export async function assertHead(
  store: RuntimeStore & ThreadHistoryStore,
  threadId: ThreadId,
  expected: string,
  read?: string | null,
): Promise<void> {
  // A head read just before stands for the read here when it is the expected one; a mismatch is
  // read again whole, for the error's latest metadata.
  if (read === expected) return;
  const latest = await latestMetadata(store, threadId);
  if (latest.headCheckpointId === expected) return;
  const reason = `Checkpoint ${expected} is not the head of thread ${threadId} (the head is ${latest.headCheckpointId ?? "none"}).`;
  throw new StaleTargetError(
    `${reason} Nothing was applied; re-read the thread and decide again.`,
    {
      threadId,
      runId: latest.runId,
      runStatus: latest.runStatus,
      headCheckpointId: latest.headCheckpointId,
      pendingInterrupts: latest.pendingInterrupts,
      reason,
    },
  );
}

/**
 * The run, if it belongs to the thread.
 *
 * @throws NotFoundError otherwise.
 */
export async function loadRun(store: RuntimeStore, threadId: ThreadId, runId: RunId) {
  const run = await store.getRun(runId);
  if (!run || run.threadId !== threadId) throw new NotFoundError("run", runId);
  return run;
}
