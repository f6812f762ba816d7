/**
 * In-memory {@link Checkpointer} for tests, demos and benchmarks.
 *
 * Values are kept *serialized* (strings from the serializer), never as live objects: a caller that
 * mutates what it passed in or got back cannot change stored state, and a value that a durable
 * store would refuse is refused here too. Every method runs synchronously inside its promise, so
 * each call is atomic with respect to the others, as a transaction would be; each encodes its
 * values before it changes anything, so a refused value writes nothing. The tables and each
 * role's logic live in `memory/`; this class only binds them to the interface.
 */
import { validateThreadId, type CheckpointId, type InterruptId, type RunId } from "../ids.ts";
import type { TaskId, ThreadId } from "../ids.ts";
import { jsonSerializer, type Serializer } from "../serde.ts";
import type { AuditRecord, InterruptStatus, SteeringRecord } from "../types.ts";
import { answerBatches, answerInterrupts } from "./memory/answers.ts";
import { verifyAuditChains } from "./audit-chain.ts";
import { auditSource, listAuditChain } from "./memory/audit.ts";
import * as checkpoints from "./memory/checkpoints.ts";
import * as leases from "./memory/leases.ts";
import { listAudit, listRuns, listRunsByStatus } from "./memory/runs.ts";
import { MemoryTables } from "./memory/tables.ts";
import { getSideRecord, putSideRecord } from "./memory/side-records.ts";
import { deleteThread, listThreads } from "./memory/threads.ts";
import { settle } from "./store-kit.ts";
import type { WebhookStore } from "./webhooks.ts";
import { EVERY_CAPABILITY } from "./capabilities.ts";
import type { ApiKeyStore } from "./api-keys.ts";
import { MemoryApiKeys } from "./memory/api-keys.ts";
import type {
  SideRecordWrite,
  AnswerBatch,
  LadderStepWrite,
  AnswerOutcome,
  AuditChainEntry,
  AuditChainQuery,
  AuditQuery,
  BatchesOutcome,
  AuditVerification,
  AuditVerifyQuery,
  CheckpointRecord,
  Checkpointer,
  Fence,
  InterruptPage,
  InterruptQuery,
  LeaseRecord,
  PendingPage,
  PendingSummary,
  RunQuery,
  RunRecord,
  StepCommit,
  StoredInterrupt,
  StreamKey,
  TaskOutcome,
  TaskResult,
  TaskResultKind,
  ThreadHead,
  ThreadRecord,
} from "./types.ts";

/** Options of {@link MemorySaver}. */
export interface MemorySaverOptions {
  /** How values are encoded; defaults to {@link jsonSerializer}. */
  serializer?: Serializer;
  /**
   * The time leases are taken, renewed and expire against; defaults to the system clock. A test
   * passes a clock it moves forward to expire a lease instead of sleeping past its TTL.
   */
  clock?: () => Date;
}

/**
 * A {@link Checkpointer} that keeps everything in process memory: Maps keyed by thread and
 * stream, arrays for history. A step commit costs a few microseconds. Method contracts are those
 * of {@link Checkpointer}.
 *
 * @example
 * ```ts
 * const graph = builder.compile({ checkpointer: new MemorySaver() });
 * ```
 */
export class MemorySaver implements Checkpointer {
  /** The serializer values are stored with. */
  readonly serializer: Serializer;
  /** Every capability: the memory store implements them all. */
  readonly capabilities = EVERY_CAPABILITY;
  readonly #db: MemoryTables;
  readonly #clock: () => Date;

  /** Creates an empty store. */
  constructor(options: MemorySaverOptions = {}) {
    this.serializer = options.serializer ?? jsonSerializer;
    this.#clock = options.clock ?? (() => new Date());
    this.#db = new MemoryTables(this.serializer);
  }

  /** The API keys (capability `apiKeys`). */
  readonly apiKeys: ApiKeyStore = new MemoryApiKeys();

  /** The webhook outbox and subscriptions, written in the same operation as the changes. */
  get webhooks(): WebhookStore {
    return this.#db.webhooks;
  }

  // Threads ------------------------------------------------------------------------------------

  putThread(thread: ThreadRecord, fence?: Fence): Promise<void> {
    return settle(() => {
      validateThreadId(thread.threadId);
      this.#db.fence(fence);
      this.#db.storeThread(this.#db.encodeThread(thread));
    });
  }

  getThread(threadId: ThreadId): Promise<ThreadRecord | undefined> {
    return settle(() => {
      const record = this.#db.threads.get(threadId)?.record;
      return record ? this.#db.decode<ThreadRecord>(record.data) : undefined;
    });
  }

  getThreadHead(
    threadId: ThreadId,
    stream: StreamKey,
    known?: CheckpointRecord,
  ): Promise<ThreadHead> {
    return settle(() => {
      const checkpoint = checkpoints.headCheckpoint(this.#db, threadId, stream, known);
      const run = checkpoint && this.#db.runs.get(checkpoint.runId);
      const record = this.#db.threads.get(threadId)?.record;
      return {
        checkpoint,
        run: run ? this.#db.decode<RunRecord>(run.data) : undefined,
        thread: record ? this.#db.decode<ThreadRecord>(record.data) : undefined,
        pendingInterrupts: this.#db.interrupts.pendingCount(threadId),
        steering: this.#steering(threadId),
      };
    });
  }

  listThreads(query: { tenant?: string | null; limit?: number; cursor?: string | null }): Promise<{
    items: ThreadRecord[];
    nextCursor: string | null;
  }> {
    return settle(() => listThreads(this.#db, query));
  }

  deleteThread(threadId: ThreadId): Promise<void> {
    return settle(() => deleteThread(this.#db, threadId));
  }

  // Checkpoints and task results ---------------------------------------------------------------

  commitStep(commit: StepCommit): Promise<void> {
    return settle(() => checkpoints.commitStep(this.#db, commit));
  }

  getCheckpoint(
    threadId: ThreadId,
    stream: StreamKey,
    id?: CheckpointId,
  ): Promise<CheckpointRecord | undefined> {
    return settle(() => checkpoints.getCheckpoint(this.#db, threadId, stream, id));
  }

  listCheckpoints(
    threadId: ThreadId,
    stream: StreamKey,
    options: { limit?: number; before?: CheckpointId } = {},
  ): Promise<CheckpointRecord[]> {
    return settle(() => checkpoints.listCheckpoints(this.#db, threadId, stream, options));
  }

  getChannelValues(
    threadId: ThreadId,
    stream: StreamKey,
    versions: Record<string, string>,
  ): Promise<Record<string, unknown>> {
    return settle(() => checkpoints.getChannelValues(this.#db, threadId, stream, versions));
  }

  putTaskOutcome(outcome: TaskOutcome): Promise<void> {
    return settle(() => checkpoints.putTaskOutcome(this.#db, outcome));
  }

  getTaskResults(
    threadId: ThreadId,
    stream: StreamKey,
    checkpointId: CheckpointId,
  ): Promise<TaskResult[]> {
    return settle(() => checkpoints.getTaskResults(this.#db, threadId, stream, checkpointId));
  }

  getTaskResultKinds(
    threadId: ThreadId,
    stream: StreamKey,
    checkpointId: CheckpointId,
  ): Promise<TaskResultKind[]> {
    return settle(() => checkpoints.getTaskResultKinds(this.#db, threadId, stream, checkpointId));
  }

  // Interrupts ---------------------------------------------------------------------------------

  getInterrupt(id: InterruptId): Promise<StoredInterrupt | undefined> {
    return settle(() => this.#db.interrupts.get(id));
  }

  getInterrupts(ids: readonly InterruptId[]): Promise<StoredInterrupt[]> {
    return settle(() => this.#db.interrupts.byIds(ids));
  }

  getPendingInterrupts(threadId: ThreadId, limit: number): Promise<PendingPage> {
    return settle(() => this.#db.interrupts.pendingPage(threadId, limit));
  }

  getTaskInterrupts(threadId: ThreadId, taskIds: readonly TaskId[]): Promise<StoredInterrupt[]> {
    return settle(() => this.#db.interrupts.ofTasks(threadId, taskIds));
  }

  getThreadInterrupts(threadId: ThreadId, status?: InterruptStatus): Promise<StoredInterrupt[]> {
    return settle(() => this.#db.interrupts.ofThread(threadId, status));
  }

  listInterrupts(query: InterruptQuery): Promise<InterruptPage> {
    return settle(() => this.#db.interrupts.list(query));
  }

  listExpiredInterrupts(now: string, limit: number): Promise<StoredInterrupt[]> {
    return settle(() => this.#db.interrupts.expired(now, limit));
  }

  takeLadderStep(step: LadderStepWrite): Promise<boolean> {
    return settle(() => this.#db.takeLadderStep(step));
  }

  summarizePending(): Promise<PendingSummary[]> {
    return settle(() => this.#db.interrupts.pendingSummary());
  }

  answerInterrupts(batch: AnswerBatch): Promise<AnswerOutcome> {
    return settle(() => answerInterrupts(this.#db, batch));
  }

  answerBatches(batches: readonly AnswerBatch[]): Promise<BatchesOutcome> {
    return settle(() => answerBatches(this.#db, batches));
  }

  // Request ids and once -----------------------------------------------------------------------

  putRequestResult(requestId: string, result: unknown, fence?: Fence): Promise<void> {
    return settle(() => {
      this.#db.fence(fence);
      const data = this.#db.encode(result);
      const request = this.#db.requests.get(requestId);
      if (request) request.result = data;
      else this.#db.requests.set(requestId, { result: data });
    });
  }

  getRequestResult(requestId: string): Promise<{ result: unknown } | undefined> {
    return settle(() => {
      const request = this.#db.requests.get(requestId);
      if (!request) return undefined;
      return { result: request.result === undefined ? undefined : this.#db.decode(request.result) };
    });
  }

  getOnce(
    threadId: ThreadId,
    taskId: TaskId,
    key: string,
  ): Promise<{ value: unknown } | undefined> {
    return settle(() => {
      const data = this.#db.threads.get(threadId)?.once.get(`${taskId}\u0000${key}`);
      return data === undefined ? undefined : { value: this.#db.decode(data) };
    });
  }

  putOnce(
    threadId: ThreadId,
    taskId: TaskId,
    key: string,
    value: unknown,
    fence?: Fence,
  ): Promise<{ value: unknown }> {
    return settle(() => {
      this.#db.fence(fence);
      const once = this.#db.thread(threadId).once;
      const slot = `${taskId}\u0000${key}`;
      let data = once.get(slot);
      if (data === undefined) once.set(slot, (data = this.#db.encode(value)));
      return { value: this.#db.decode(data) };
    });
  }

  // Side records -------------------------------------------------------------------------------

  getSideRecord(
    tenant: string | null,
    kind: string,
    key: string,
  ): Promise<{ value: unknown } | undefined> {
    return settle(() => getSideRecord(this.#db, this.#clock().getTime(), tenant, kind, key));
  }

  putSideRecord(record: SideRecordWrite): Promise<{ value: unknown; created: boolean }> {
    return settle(() => putSideRecord(this.#db, this.#clock().getTime(), record));
  }

  // Runs ---------------------------------------------------------------------------------------

  putRun(run: RunRecord, fence?: Fence): Promise<void> {
    return settle(() => {
      this.#db.fence(fence);
      this.#db.storeRun(run, this.#db.encode(run));
    });
  }

  getRun(runId: RunId): Promise<RunRecord | undefined> {
    return settle(() => {
      const row = this.#db.runs.get(runId);
      return row ? this.#db.decode<RunRecord>(row.data) : undefined;
    });
  }

  listRuns(threadId: ThreadId): Promise<RunRecord[]> {
    return settle(() => listRuns(this.#db, threadId));
  }

  listRunsByStatus(query: RunQuery): Promise<{ items: RunRecord[]; nextCursor: string | null }> {
    return settle(() => listRunsByStatus(this.#db, query));
  }

  // Steering and audit -------------------------------------------------------------------------

  appendSteering(record: SteeringRecord, fence?: Fence): Promise<void> {
    return settle(() => {
      this.#db.fence(fence);
      const data = this.#db.encode(record);
      this.#db.thread(record.threadId).steering.push(data);
    });
  }

  listSteering(threadId: ThreadId): Promise<SteeringRecord[]> {
    return settle(() => this.#steering(threadId));
  }

  #steering(threadId: ThreadId): SteeringRecord[] {
    return (this.#db.threads.get(threadId)?.steering ?? []).map((data) =>
      this.#db.decode<SteeringRecord>(data),
    );
  }

  appendAudit(record: AuditRecord, fence?: Fence): Promise<void> {
    return settle(() => {
      this.#db.fence(fence);
      const line = this.#db.encodeAudit(record);
      this.#db.storeAudit(line.threadId, line.data);
    });
  }

  listAudit(query: AuditQuery): Promise<{ items: AuditRecord[]; nextCursor: string | null }> {
    return settle(() => listAudit(this.#db, query));
  }

  listAuditChain(
    query: AuditChainQuery,
  ): Promise<{ items: AuditChainEntry[]; nextCursor: string | null }> {
    return settle(() => listAuditChain(this.#db, query));
  }

  verifyAudit(query: AuditVerifyQuery): Promise<AuditVerification> {
    return verifyAuditChains(auditSource(this.#db), query);
  }

  // Leases -------------------------------------------------------------------------------------

  acquireLease(threadId: ThreadId, owner: string, ttlMs: number): Promise<number | null> {
    return settle(() => leases.acquireLease(this.#db, threadId, owner, ttlMs, this.#now()));
  }

  renewLease(threadId: ThreadId, owner: string, ttlMs: number): Promise<boolean> {
    return settle(() => leases.renewLease(this.#db, threadId, owner, ttlMs, this.#now()));
  }

  releaseLease(threadId: ThreadId, owner: string): Promise<void> {
    return settle(() => leases.releaseLease(this.#db, threadId, owner));
  }

  getLease(threadId: ThreadId): Promise<LeaseRecord | undefined> {
    return settle(() => leases.getLease(this.#db, threadId, this.#now()));
  }

  /** The store's clock in epoch ms, what lease expiries are compared with. */
  #now(): number {
    return this.#clock().getTime();
  }

  /** Nothing to release; present for the interface. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
