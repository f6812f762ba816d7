/**
 * A thread session: what one call binds — the store (fenced by the lease when one is held), the
 * thread id, the lease, the actor and the clock — and the thread-level reads and writes every
 * mechanism goes through: heads, pending interrupts, request results, audit and cancellation.
 */
import { hasCapability } from "../checkpoint/capabilities.ts";
import { randomUUID } from "node:crypto";
import type { Schema } from "../channels.ts";
import type {
  RuntimeStore,
  CheckpointRecord,
  ContinuationReadResults,
  LeaseReadResults,
  InterruptPage,
  LeaseReads,
  PendingPage,
  RunRecord,
  StoredInterrupt,
  StreamKey,
  TaskRef,
  ThreadHead,
  ThreadRecord,
} from "../checkpoint/types.ts";
import { ThreadInterruptedError } from "../errors.ts";
import type { CheckpointId, InterruptId, RunId, TaskId, ThreadId } from "../ids.ts";
import { LEASE_READ_RUN_LIMIT } from "../checkpoint/store-kit.ts";
import { ROOT_STREAM } from "../keys.ts";
import { toPublicInterrupt } from "../interrupts/records.ts";
import type { AuditRecord, SteeringRecord } from "../types.ts";
import { headCacheOf, type HeadCache } from "./head-cache.ts";
import type { LeaseSettings } from "../graph/options.ts";
import { withLease, type HeldLease } from "./lease.ts";
import { pendingPageOf } from "./narrow-reads.ts";

/** Fields of a {@link ThreadSession}. */
export interface SessionInit {
  /** The store; with a lease, the fenced view every write of the call goes through. */
  store: RuntimeStore;
  threadId: ThreadId;
  /** Who acts (recorded in the audit log). */
  actor: string;
  /** The thread lease the call holds (absent for reads, and without a checkpointer). */
  lease?: HeldLease | undefined;
  /** False when the graph has no checkpointer: a private memory store backs the call. */
  durable?: boolean;
  /** The clock of the call's records. */
  clock?: () => Date;
  /** Heads this process decoded before, offered to the store on the call's first read. */
  heads?: HeadCache | undefined;
  /** What the store read with the lease, when this call took it (see `LeaseReads`). */
  prefetched?: { asked: LeaseReads; reads: LeaseReadResults } | undefined;
}

/** One call's view of one thread. */
export class ThreadSession {
  readonly store: RuntimeStore;
  readonly threadId: ThreadId;
  readonly actor: string;
  readonly lease: HeldLease | undefined;
  readonly durable: boolean;
  /** The clock of the call's records (`now()` is its ISO form). */
  readonly clock: () => Date;
  private readonly heads: HeadCache | undefined;
  private writesAfterRun = false;
  /** The last time {@link ThreadSession.now} formatted, and its ISO form. */
  private formattedTime = Number.NaN;
  private formattedNow = "";
  /**
   * Reads the store made with the lease, valid until the call's first write (nothing else writes
   * the thread under the lease): consulted by the read methods below, then dropped.
   */
  private prefetched: { asked: LeaseReads; reads: LeaseReadResults } | undefined;
  /** Reads the store made after this call's answer, in its round trip: the continuation's. */
  private continued: ContinuationReadResults | undefined;
  /** The pending page read after the pause that ended the root run (see `thenReadPending`). */
  private pausePage: PendingPage | undefined;
  /** The head those reads came with, for the call's head read. */
  private continuedHead: ThreadHead | undefined;
  /** The tasks this call's answer woke, the ones its continuation runs (see {@link wokenAt}). */
  private woken: readonly TaskRef[] = [];

  constructor(init: SessionInit) {
    this.store = init.store;
    this.threadId = init.threadId;
    this.actor = init.actor;
    this.lease = init.lease;
    this.durable = init.durable ?? true;
    this.clock = init.clock ?? (() => new Date());
    this.heads = init.heads;
    this.prefetched = init.prefetched;
    const head = init.prefetched?.reads.head.checkpoint;
    if (head && head !== init.prefetched?.asked.known) this.heads?.remember(head);
  }

  /**
   * Says the call is about to write: what the store read with the lease may be stale after it,
   * so the read methods go to the store again.
   */
  dropPrefetched(): void {
    this.prefetched = undefined;
  }

  /**
   * Keeps the reads an answer's round trip made for the continuation (see `AnswerBatch.thenRead`)
   * and the tasks it woke (their paused results went with the answer).
   */
  keepContinuation(reads: ContinuationReadResults | undefined, woken: readonly TaskRef[]): void {
    this.continued = reads;
    this.continuedHead = reads?.head;
    this.woken = woken;
  }

  /**
   * The tasks this call's answer woke in the step of `stream` at `checkpointId`, once: what a
   * continuation of that step runs, unless a crash left other tasks without a result.
   */
  wokenAt(stream: StreamKey, checkpointId: CheckpointId): TaskId[] | undefined {
    const ids = this.woken
      .filter((ref) => ref.stream === stream && ref.checkpointId === checkpointId)
      .map((ref) => ref.taskId);
    if (ids.length === 0) return undefined;
    this.woken = this.woken.filter((ref) => ref.stream !== stream);
    return ids;
  }

  /**
   * The continuation reads an answer made at `head`, once: `undefined` when there are none, or
   * they were made at another head.
   */
  takeContinuation(head: CheckpointRecord): ContinuationReadResults | undefined {
    const reads = this.continued;
    if (reads?.head.checkpoint !== head) return undefined;
    this.continued = undefined;
    return reads;
  }

  /** Keeps the pending page the pause that ended the root run read after it. */
  keepPendingPage(page: PendingPage): void {
    this.pausePage = page;
  }

  /** The pending page the run's last write read, once (`undefined`: none was read). */
  takePendingPage(): PendingPage | undefined {
    const page = this.pausePage;
    this.pausePage = undefined;
    return page;
  }

  /** A prefetched read, when the lease's round trip made it (`asked` says it did). */
  private pre<T>(asked: (ask: LeaseReads) => boolean, read: (reads: LeaseReadResults) => T) {
    const p = this.prefetched;
    return p && asked(p.asked) ? { value: read(p.reads) } : undefined;
  }

  /**
   * Whether the run's last write may also end the lease (`releaseLease`): the session holds one,
   * nothing is to be written after the run (see {@link ThreadSession.keepLeaseAfterRun}), and no
   * other call of this process waits to be handed the lease. Asked when that write is made.
   */
  get releasesWithLastWrite(): boolean {
    return this.lease !== undefined && !this.writesAfterRun && !this.lease.awaited;
  }

  /** Says the call writes after its run (a request's result): the lease must outlive the run. */
  keepLeaseAfterRun(): void {
    this.writesAfterRun = true;
  }

  /** The current time, as records store it. */
  now(): string {
    // Formatted once per millisecond: a chain of quick steps reads the same time many times.
    const time = this.clock().getTime();
    if (time !== this.formattedTime) {
      this.formattedTime = time;
      this.formattedNow = new Date(time).toISOString();
    }
    return this.formattedNow;
  }

  /** The head of a stream (default: the root run's), or the checkpoint `checkpointId` on it. */
  head(
    stream: string = ROOT_STREAM,
    checkpointId?: CheckpointId,
  ): Promise<CheckpointRecord | undefined> {
    const pre = this.pre(
      () => stream === ROOT_STREAM && checkpointId === undefined,
      (reads) => reads.head.checkpoint,
    );
    return pre
      ? Promise.resolve(pre.value)
      : this.store.getCheckpoint(this.threadId, stream, checkpointId);
  }

  /** The thread's interrupts (all streams), optionally of one status. */
  interrupts(status?: StoredInterrupt["status"]): Promise<StoredInterrupt[]> {
    return this.store.getThreadInterrupts(this.threadId, status);
  }

  /** The thread's pending interrupts. */
  pending(): Promise<StoredInterrupt[]> {
    return this.interrupts("pending");
  }

  /**
   * Interrupt rows of one run (all statuses unless given), through the store's run index: a run
   * reads its own rows, not the thread's, so resuming one of 1,000 paused children stays cheap.
   */
  async interruptsOfRun(
    runId: RunId,
    status?: StoredInterrupt["status"],
  ): Promise<StoredInterrupt[]> {
    const pre = this.pre(
      (ask) => ask.runId === runId && status === "pending",
      (reads) => reads.runPending,
    );
    if (pre?.value && pre.value.length < LEASE_READ_RUN_LIMIT) return pre.value;
    const rows: StoredInterrupt[] = [];
    let cursor: string | null = null;
    do {
      if (!hasCapability(this.store, "interruptQueue"))
        // Newest first, as the queue's index lists them.
        return (await this.store.getThreadInterrupts(this.threadId, status))
          .filter((row) => row.runId === runId)
          .reverse();
      const page: InterruptPage = await this.store.listInterrupts({
        threadId: this.threadId,
        runId,
        limit: 1000,
        cursor,
        ...(status ? { status } : {}),
      });
      rows.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    return rows;
  }

  /** A run of this store (any thread: callers check the thread where it matters). */
  run(runId: RunId): Promise<RunRecord | undefined> {
    const pre = this.pre(
      (ask) => ask.runId === runId,
      (reads) => reads.run,
    );
    return pre ? Promise.resolve(pre.value) : this.store.getRun(runId);
  }

  /** The oldest `limit` pending interrupts of the thread and their count. */
  pendingPage(limit: number): Promise<PendingPage> {
    const pre = this.pre(
      (ask) => ask.pendingLimit === limit,
      (reads) => reads.pending,
    );
    return pre?.value
      ? Promise.resolve(pre.value)
      : pendingPageOf(this.store, this.threadId, limit);
  }

  /** The interrupts of `ids` (any thread, any status; unknown ids left out). */
  interruptsById(ids: readonly InterruptId[]): Promise<StoredInterrupt[]> {
    const pre = this.pre(
      (ask) => ids.every((id) => ask.interruptIds?.includes(id) === true),
      (reads) => reads.interrupts?.filter((row) => ids.includes(row.id)),
    );
    return pre?.value ? Promise.resolve(pre.value) : this.store.getInterrupts(ids);
  }

  /** Stores a run row with the session's clock as its update time. */
  putRun(run: RunRecord, changes: Partial<RunRecord> = {}): Promise<void> {
    return this.store.putRun({ ...run, ...changes, updatedAt: this.now() });
  }

  /** Reads the values a checkpoint references (missing channels take their initial value). */
  async values(
    schema: Schema,
    checkpoint: CheckpointRecord | undefined,
  ): Promise<Record<string, unknown>> {
    const stored =
      checkpoint && Object.keys(checkpoint.versions).length > 0
        ? await this.store.getChannelValues(this.threadId, checkpoint.stream, checkpoint.versions)
        : {};
    return this.valuesOf(schema, stored);
  }

  /** The channel values of `schema` from stored ones (missing channels take their initial value). */
  valuesOf(schema: Schema, stored: Record<string, unknown>): Record<string, unknown> {
    const values: Record<string, unknown> = {};
    for (const [name, channel] of Object.entries(schema))
      values[name] = name in stored ? stored[name] : channel.initial();
    return values;
  }

  /**
   * The root head this process last read of the thread, if it still holds it: what
   * {@link ThreadSession.threadHead} offers the store, and hands back while it is still the head.
   */
  knownHead(): CheckpointRecord | undefined {
    return this.heads?.get(this.threadId);
  }

  /**
   * Keeps the root checkpoint a call ended at — committed by the call, or read — as the thread's
   * known head, so the next call of this process on the thread gets it back from the store
   * without its row being read or decoded (and can start its continuation's reads early). A
   * copy is kept, since the cache freezes what it holds and the caller still owns `checkpoint`.
   */
  rememberHead(checkpoint: CheckpointRecord): void {
    if (!this.heads || checkpoint.stream !== ROOT_STREAM) return;
    if (this.heads.get(this.threadId) === checkpoint) return;
    // A `Send` argument may have been changed by the node that got it in this call: such a head
    // is left to be read back as stored, since later calls must start from the argument as sent.
    for (let i = 0; i < checkpoint.next.length; i++) {
      const arg = checkpoint.next[i]?.arg;
      if (typeof arg === "object" && arg !== null) return;
    }
    this.heads.remember({
      ...checkpoint,
      next: checkpoint.next.map((task) => ({ ...task })),
      versions: { ...checkpoint.versions },
      metadata: { ...checkpoint.metadata },
    });
  }

  /**
   * What a call reads first, in one read: the root stream's head checkpoint, its run, the thread
   * row and how many interrupts are pending.
   */
  async threadHead(): Promise<ThreadHead> {
    const known = this.knownHead();
    // The head read by the answer's round trip, or with the lease when the call has not written
    // since: each stands for this read once.
    const early = this.continuedHead ?? this.prefetched?.reads.head;
    this.continuedHead = undefined;
    this.prefetched = undefined;
    const read = early ?? (await this.store.getThreadHead(this.threadId, ROOT_STREAM, known));
    if (read.checkpoint !== undefined && read.checkpoint !== known)
      this.heads?.remember(read.checkpoint);
    return read;
  }

  /**
   * The row of a thread that is not stored yet, with `tenant` and `metadata`. The first commit of
   * the thread stores it (`StepCommit.thread`), so a new thread costs no write of its own.
   */
  newThread(
    tenant: string | null | undefined,
    metadata: Record<string, unknown> | undefined,
  ): ThreadRecord {
    const now = this.now();
    return {
      threadId: this.threadId,
      tenant: tenant ?? null,
      metadata: metadata ?? {},
      createdAt: now,
      updatedAt: now,
    };
  }

  /** What a request id produced before, if it was applied (see `RunOptions.requestId`). */
  requestResult(requestId: string): ReturnType<RuntimeStore["getRequestResult"]> {
    const pre = this.pre(
      (ask) => ask.requestId === requestId,
      (reads) => reads.request,
    );
    return pre ? Promise.resolve(pre.value) : this.store.getRequestResult(requestId);
  }

  /** Stores a request's outcome so that a duplicate of it returns the same result. */
  async finishRequest<T>(requestId: string, running: Promise<T>): Promise<T> {
    const result = await running;
    await this.store.putRequestResult(requestId, result);
    return result;
  }

  /** Steering records of the thread, oldest first. */
  steering(): Promise<SteeringRecord[]> {
    return hasCapability(this.store, "steering")
      ? this.store.listSteering(this.threadId)
      : Promise.resolve([]);
  }

  /**
   * An audit line by the session's actor, now: for a write that appends it in its own
   * transaction (`StepCommit.audit`).
   */
  auditLine(
    entry: Pick<AuditRecord, "runId" | "action" | "data"> &
      Partial<Pick<AuditRecord, "interruptId">>,
  ): AuditRecord {
    return {
      id: `a_${randomUUID()}`,
      threadId: this.threadId,
      runId: entry.runId,
      ...(entry.interruptId ? { interruptId: entry.interruptId } : {}),
      action: entry.action,
      actor: this.actor,
      data: entry.data,
      createdAt: this.now(),
    };
  }

  /**
   * Refuses plain input to a thread with pending interrupts, or cancels them when `onPending` is
   * `"cancel"`: their runs, and the runs above them that waited on those (a supervisor paused in
   * its sub-agents), are marked cancelled, so the new input starts a new run.
   *
   * @throws ThreadInterruptedError when interrupts are pending and not to be cancelled.
   */
  async cancelPending(pending: StoredInterrupt[], onPending: "error" | "cancel"): Promise<void> {
    if (pending.length === 0) return;
    const refuse = (): ThreadInterruptedError =>
      new ThreadInterruptedError(this.threadId, pending.map(toPublicInterrupt));
    if (onPending !== "cancel") throw refuse();
    const result = await this.store.answerInterrupts({
      threadId: this.threadId,
      answers: [],
      cancel: pending.map((p) => p.id),
      wake: [],
      actor: this.actor,
      action: "cancel",
    });
    if (!result.ok) throw refuse();
    const seen = new Set<string>();
    for (let runId of new Set(pending.map((p) => p.runId))) {
      // Up the run tree until a run that is not paused (or one already cancelled here).
      for (;;) {
        if (seen.has(runId)) break;
        seen.add(runId);
        const run = await this.store.getRun(runId);
        if (!run || (run.status !== "interrupted" && run.status !== "running")) break;
        await this.putRun(run, { status: "cancelled" });
        if (run.parentRunId === null) break;
        runId = run.parentRunId;
      }
    }
  }
}

/**
 * Runs `fn` with a session that holds the thread's lease: every write of the call carries its
 * fence, and the lease is released when `fn` settles.
 *
 * @throws ThreadBusyError when another owner keeps the lease longer than `settings.waitMs`.
 */
export function openSession<T>(
  store: RuntimeStore,
  threadId: ThreadId,
  settings: LeaseSettings,
  actor: string,
  fn: (session: ThreadSession) => Promise<T>,
  reads?: Omit<LeaseReads, "known">,
): Promise<T> {
  const heads = headCacheOf(store);
  const asked = reads && { ...reads, known: heads.get(threadId) };
  return withLease(
    store,
    threadId,
    settings,
    (lease, fresh) =>
      fn(
        new ThreadSession({
          store: lease.store,
          threadId,
          actor,
          lease,
          heads,
          prefetched: asked && fresh && { asked, reads: fresh },
        }),
      ),
    asked,
  );
}
