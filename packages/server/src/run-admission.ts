/**
 * Accepting a run for the background queue: the multitask policy's checks, the `queued` row, and
 * for `interrupt` and `rollback` the cancel of the thread's current run. What executes the row is
 * `./background.ts`.
 */
import { randomUUID } from "node:crypto";
import {
  ROOT_STREAM,
  InvalidInputError,
  RunInProgressError,
  ThreadBusyError,
  ThreadInterruptedError,
  requestRunIdFor,
  type Checkpointer,
  type CheckpointId,
  type QueuedRunRequest,
  type RunId,
  type RunRecord,
  type ThreadId,
  type ThreadRecord,
} from "@rein/core";
import { toPublicInterrupt } from "@rein/core/store";
import type { ServedGraph } from "./registry.ts";
import type { RunManager } from "./run-manager.ts";

/**
 * What happens to a thread's current run when another is requested (LangGraph Platform's
 * multitask strategies): `reject` refuses the new one (409), `enqueue` runs it after the current
 * one, `interrupt` stops the current one at its next step boundary (its checkpoints are kept),
 * `rollback` stops it and starts the new one from before its first step.
 */
export type MultitaskPolicy = QueuedRunRequest["multitask"];

/** A run to accept. */
export interface RunRequest {
  input: Record<string, unknown>;
  multitask: MultitaskPolicy;
  /** The request id the run executes under; its run id derives from it. */
  requestId: string;
  /**
   * The same request was claimed before (a retry, or an identical request racing this one):
   * its outcome is the first attempt's run, which this one waits for a moment to find.
   */
  repeat?: boolean | undefined;
  actor: string;
  onPending?: "error" | "cancel" | undefined;
  interruptBefore?: string[] | undefined;
  interruptAfter?: string[] | undefined;
}

/** Whether a run is a root run accepted and waiting in its thread's line (not a child run). */
export function isQueuedRoot(run: RunRecord): boolean {
  return run.status === "queued" && run.parentRunId === null;
}

/** The policy checks and the queued row of a run being accepted. */
export class RunAdmission {
  /** The lease owners of `reject` checks: distinct from every run's. */
  private readonly owner = `admission-${process.pid}-${randomUUID().slice(0, 8)}`;
  /** Checks made so far: each takes the lease under an owner of its own (see admitExclusive). */
  private checks = 0;

  constructor(
    private readonly store: Checkpointer,
    private readonly runs: RunManager,
  ) {}

  /**
   * Accepts a run: after the policy's checks, its `queued` row is stored (and, for `interrupt`
   * and `rollback`, the current run is asked to stop). A repeat of a request (same request id) returns the run it queued, unchanged.
   *
   * @throws ThreadBusyError with `reject` while the thread runs or has queued runs.
   * @throws ThreadInterruptedError with `reject` when the thread waits on interrupts.
   * @throws RunInProgressError with `reject` while an answered run waits for its continuation.
   */
  async admit(thread: ThreadRecord, graph: ServedGraph, request: RunRequest): Promise<RunRecord> {
    const { store, runs } = this;
    const threadId = thread.threadId;
    const runId = requestRunIdFor(threadId, request.requestId);
    const existing = await this.firstAttempt(runId, request.repeat === true);
    if (existing) return existing;
    let current: RunRecord | undefined;
    let rollbackOf: RunId | null = null;
    if (request.multitask === "reject") {
      return this.admitExclusive(thread, graph, runId, request);
    }
    if (request.multitask !== "enqueue") {
      current = await this.currentRun(threadId);
      if (request.multitask === "rollback" && current) {
        rollbackOf = current.runId;
        if ((await forkPointBefore(store, threadId, current.runId)) === undefined)
          throw new InvalidInputError(
            `Run ${current.runId} is the first run of thread ${threadId}: there is no earlier state to roll back to. Send multitask "interrupt" to stop it and keep its steps.`,
            { threadId, runId: current.runId },
          );
      }
    }
    const record = queuedRecord(thread, graph, runId, request, rollbackOf);
    await store.putRun(record);
    // Queued first, then cancelled: the new run is in line before the thread goes free.
    if (current) runs.cancel(current.runId);
    return record;
  }

  /**
   * `reject`: queued only if nothing else has the thread, checked and written under the thread's
   * lease, so two such requests racing on one idle thread give one 202 and one 409.
   */
  private async admitExclusive(
    thread: ThreadRecord,
    graph: ServedGraph,
    runId: RunId,
    request: RunRequest,
  ): Promise<RunRecord> {
    const { store } = this;
    const threadId = thread.threadId;
    // An owner per check, not per process: a store grants a lease again to its holder (with a
    // new token), so two checks of one process racing on a thread under one owner would both
    // "take" it, and the first's write would be fenced out by the second's token.
    const owner = `${this.owner}:${++this.checks}`;
    const token = await store.acquireLease(threadId, owner, 10_000);
    if (token === null)
      throw new ThreadBusyError(threadId, (await store.getLease(threadId))?.owner ?? null);
    try {
      const runsOfThread = await store.listRuns(threadId);
      const queued = runsOfThread.find(isQueuedRoot);
      if (queued) throw new ThreadBusyError(threadId, `queued run ${queued.runId}`);
      const head = await store.getCheckpoint(threadId, ROOT_STREAM);
      const headRun = head ? runsOfThread.find((r) => r.runId === head.runId) : undefined;
      if (headRun?.status === "running")
        throw new RunInProgressError(threadId, headRun.runId, headRun.status);
      if (request.onPending !== "cancel") {
        const pending = await store.getPendingInterrupts(threadId, 20);
        if (pending.total > 0)
          throw new ThreadInterruptedError(threadId, pending.items.map(toPublicInterrupt));
      }
      const record = queuedRecord(thread, graph, runId, request, null);
      await store.putRun(record, { threadId, token });
      return record;
    } finally {
      await store.releaseLease(threadId, owner).catch(() => undefined);
    }
  }

  /** The run a request queued before, if any (see {@link firstAttempt}). */
  private firstAttempt(runId: RunId, repeat: boolean): Promise<RunRecord | undefined> {
    return firstAttempt(this.store, runId, repeat);
  }

  /** The thread's run that is executing (or left running), if any. */
  private async currentRun(threadId: ThreadId): Promise<RunRecord | undefined> {
    const { store } = this;
    const head = await store.getCheckpoint(threadId, ROOT_STREAM);
    if (!head) return undefined;
    const run = await store.getRun(head.runId);
    return run?.status === "running" ? run : undefined;
  }
}

/**
 * The run a request started or queued before, if any. A repeat racing its first attempt waits up
 * to 2 s for the first attempt's row (its checks take a few round trips); if none comes, the
 * first attempt was refused or never reached the store, and the repeat goes on on its own.
 */
export async function firstAttempt(
  store: Checkpointer,
  runId: RunId,
  repeat: boolean,
): Promise<RunRecord | undefined> {
  const deadline = Date.now() + (repeat ? 2_000 : 0);
  for (;;) {
    const run = await store.getRun(runId);
    if (run || Date.now() >= deadline) return run;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The newest root checkpoint of a thread that a run did not write: where a run started that
 * discards `runId`'s steps begins. `undefined` when the run wrote every checkpoint of the thread.
 */
export async function forkPointBefore(
  store: Checkpointer,
  threadId: ThreadId,
  runId: RunId,
): Promise<string | undefined> {
  let before: CheckpointId | undefined;
  for (;;) {
    const page = await store.listCheckpoints(threadId, ROOT_STREAM, {
      limit: 100,
      ...(before ? { before } : {}),
    });
    const found = page.find((c) => c.runId !== runId);
    if (found) return found.id;
    if (page.length < 100) return undefined;
    before = page.at(-1)?.id;
  }
}

/** The `queued` row of an accepted run. */
function queuedRecord(
  thread: ThreadRecord,
  graph: ServedGraph,
  runId: RunId,
  request: RunRequest,
  rollbackOf: RunId | null,
): RunRecord {
  const now = new Date().toISOString();
  const queued: QueuedRunRequest = {
    input: request.input,
    requestId: request.requestId,
    multitask: request.multitask,
    actor: request.actor,
    ...(request.onPending ? { onPending: request.onPending } : {}),
    ...(rollbackOf ? { rollbackOf } : {}),
  };
  return {
    runId,
    threadId: thread.threadId,
    parentRunId: null,
    parentTaskId: null,
    graph: graph.name,
    namespace: [],
    stream: ROOT_STREAM,
    status: "queued",
    createdAt: now,
    updatedAt: now,
    options: {
      ...(request.interruptBefore ? { interruptBefore: request.interruptBefore } : {}),
      ...(request.interruptAfter ? { interruptAfter: request.interruptAfter } : {}),
      queued,
    },
  };
}
