/**
 * Reading threads on behalf of a caller: tenant checks (another tenant's thread does not exist
 * for you), the thread view with status and pending interrupts, and the latest metadata that
 * 409 answers carry.
 */
import {
  ROOT_STREAM,
  NotFoundError,
  StaleTargetError,
  type Checkpointer,
  type Interrupt,
  type RunId,
  type ThreadId,
  type ThreadRecord,
} from "@rein/core";
import { approvalView, type StoredInterrupt } from "@rein/core/store";
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
  store: Checkpointer,
  principal: Principal,
  threadId: string,
): Promise<ThreadRecord> {
  const thread = await store.getThread(threadId as ThreadId);
  if (!thread || !canSee(principal, thread.tenant)) throw new NotFoundError("thread", threadId);
  return thread;
}

/**
 * The thread (as {@link loadThread}) and the run of its head, in one read: what a resume needs
 * before core runs it (the run's id names the run's event hub).
 *
 * @throws NotFoundError when the thread does not exist or belongs to another tenant.
 */
export async function loadThreadHead(
  store: Checkpointer,
  principal: Principal,
  threadId: string,
): Promise<{ thread: ThreadRecord; runId: string | null; headCheckpointId: string | null }> {
  const read = await store.getThreadHead(threadId as ThreadId, ROOT_STREAM);
  const thread = read.thread;
  if (!thread || !canSee(principal, thread.tenant)) throw new NotFoundError("thread", threadId);
  return {
    thread,
    runId: read.checkpoint?.runId ?? null,
    headCheckpointId: read.checkpoint?.id ?? null,
  };
}

/** A public interrupt record (the stored row has internal fields). */
export function publicInterrupt(row: Interrupt | StoredInterrupt): Interrupt {
  const {
    id,
    runId,
    threadId,
    node,
    taskId,
    namespace,
    order,
    payload,
    kind,
    status,
    checkpointId,
    createdAt,
    approval,
  } = row;
  return {
    id,
    runId,
    threadId,
    node,
    taskId,
    namespace,
    order,
    payload,
    kind,
    status,
    checkpointId,
    createdAt,
    ...(approval
      ? { approval }
      : "policy" in row && row.policy
        ? { approval: approvalView(row.policy, row.approvals) }
        : {}),
  };
}

/** What `GET /threads/:id` answers. */
export interface ThreadView {
  threadId: string;
  graph: string;
  tenant: string | null;
  metadata: Record<string, unknown>;
  status: "idle" | "queued" | "running" | "interrupted" | "done" | "error" | "cancelled";
  runId: string | null;
  headCheckpointId: string | null;
  pendingInterrupts: Interrupt[];
  createdAt: string;
  updatedAt: string;
}

/** The latest metadata of a thread: head run, its status, head checkpoint, pending interrupts. */
export async function latestMetadata(
  store: Checkpointer,
  threadId: string,
): Promise<{
  runId: string | null;
  runStatus: string | null;
  headCheckpointId: string | null;
  pendingInterrupts: Interrupt[];
}> {
  const head = await store.getCheckpoint(threadId as ThreadId, ROOT_STREAM);
  // Without a head, the thread's first run may be queued or starting: name it.
  const run = head
    ? await store.getRun(head.runId)
    : (await store.listRuns(threadId as ThreadId)).filter((r) => r.parentRunId === null).at(-1);
  const pending = await store.getThreadInterrupts(threadId as ThreadId, "pending");
  return {
    runId: run?.runId ?? null,
    runStatus: run?.status ?? null,
    headCheckpointId: head?.id ?? null,
    pendingInterrupts: pending.map(publicInterrupt),
  };
}

/** A thread as the API shows it. */
export async function threadView(store: Checkpointer, thread: ThreadRecord): Promise<ThreadView> {
  const latest = await latestMetadata(store, thread.threadId);
  const lease = await store.getLease(thread.threadId);
  const status: ThreadView["status"] = lease
    ? "running"
    : latest.pendingInterrupts.length > 0
      ? "interrupted"
      : ((latest.runStatus as ThreadView["status"] | null) ?? "idle");
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
  store: Checkpointer,
  threadId: string,
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
export async function loadRun(store: Checkpointer, threadId: string, runId: string) {
  const run = await store.getRun(runId as RunId);
  if (!run || run.threadId !== threadId) throw new NotFoundError("run", runId);
  return run;
}
