/**
 * {@link PostgresSaver}: the checkpointer for production and for many processes on many machines.
 */
import type pg from "pg";
import {
  jsonSerializer,
  type AuditRecord,
  type CheckpointId,
  type InterruptId,
  type InterruptStatus,
  type RunId,
  type Serializer,
  type SteeringRecord,
  type TaskId,
  type ThreadId,
} from "@rein/core";
import {
  checkFence,
  lazyPendingPage,
  decodeCursor,
  decodeSeqCursor,
  encodeCursor,
  keysetSlice,
  pageLimit,
  validateThreadId,
  verifyAuditChains,
  type AnswerBatch,
  type AnswerOutcome,
  type BatchesOutcome,
  EVERY_CAPABILITY,
  type AuditChainQuery,
  type AuditQuery,
  type AuditVerification,
  type AuditVerifyQuery,
  type CheckpointRecord,
  type Checkpointer,
  type Fence,
  type InterruptPage,
  type LeaseReadResults,
  type LeaseReads,
  type InterruptQuery,
  type LeaseRecord,
  type PendingPage,
  type PendingSummary,
  type RunQuery,
  type RunRecord,
  type StepCommit,
  type StoredInterrupt,
  type StreamKey,
  type TaskOutcome,
  type TaskResult,
  type TaskResultKind,
  type ThreadHead,
  type ThreadRecord,
} from "@rein/core/store";
import { answerBatches, answerInterrupts } from "./answers.ts";
import { AuditChains } from "./audit.ts";
import { channelValues } from "./chains.ts";
import { commitStep } from "./commit.ts";
import { expiredInterrupts, takeLadderStep } from "./timer.ts";
import { PostgresWebhooks } from "./webhooks.ts";
import { PostgresApiKeys } from "./api-keys.ts";
import { postgresFirstWrites, type FirstWrites } from "./first-writes.ts";
import {
  RowCodec,
  type CheckpointRow,
  type InterruptRow,
  type RunRow,
  type TaskResultRow,
  type ThreadRow,
} from "./codec.ts";
import { migrate, quoteSchema } from "./migrations.ts";
import { checked, guarded } from "./connection.ts";
import { storePool, type StatementMode } from "./pooling.ts";
import { auditQuery, interruptCountQuery, interruptsQuery, threadsQuery } from "./queries.ts";
import {
  decodeContinuation,
  decodeHead,
  decodeLeaseReads,
  type HeadJson,
  type LeaseJson,
} from "./reads.ts";
import { statementsFor, type Named, type Statements } from "./statements.ts";

/** Options of {@link PostgresSaver}: a connection string or a pool of your own. */
export type PostgresSaverOptions = (
  { connectionString: string; pool?: undefined } | { pool: pg.Pool; connectionString?: undefined }
) & {
  /** Postgres schema holding Rein's tables; created if missing. Default `"rein"`. */
  schema?: string;
  /** How values are encoded; defaults to the JSON serializer with tagged types. */
  serializer?: Serializer;
  /**
   * Told when the server closes an idle connection of the pool the saver owns (the connection is
   * dropped and replaced on next use). Default: ignored.
   */
  onIdleError?: (error: Error) => void;
  /**
   * `"unnamed"` sends every statement unnamed, as a transaction-mode pooler (PgBouncer) needs:
   * named prepared statements live on one server connection, and the pooler hands each
   * transaction another. Default: `"unnamed"` when the connection string says `pgbouncer=true`,
   * else `"named"`. Applies to the pool the saver creates; for a pool of your own, give it
   * `Client: UnnamedStatementClient`.
   */
  statements?: StatementMode;
};

/**
 * A {@link Checkpointer} on PostgreSQL (`pg`), for many processes on many machines.
 *
 * All tables live in one schema (default `rein`), migrated by {@link PostgresSaver.setup} under
 * an advisory lock. A step commit is a single statement (one round trip): the stream head row is
 * moved with a conditional `UPDATE`, so concurrent commits serialize on its row lock and the
 * loser gets {@link CheckpointConflictError}. Answers lock their interrupt rows in id order, so of
 * two people answering one interrupt exactly one wins.
 *
 * @example
 * ```ts
 * const saver = await PostgresSaver.connect({ connectionString: process.env.DATABASE_URL! });
 * const graph = builder.compile({ checkpointer: saver });
 * ```
 */
export class PostgresSaver implements Checkpointer {
  /** The serializer values are stored with. */
  readonly serializer: Serializer;
  /** Every capability: this store implements them all. */
  /** Every capability, and `leaseReads`: a round trip saved is worth it over a network. */
  readonly capabilities = Object.freeze({ ...EVERY_CAPABILITY, leaseReads: true as const });
  /** The webhook outbox of this schema, on this pool. */
  readonly webhooks = new PostgresWebhooks(this);
  /** The API keys of this schema, on this pool. */
  readonly apiKeys = new PostgresApiKeys(this);
  /** The connection pool (yours if you passed one). */
  readonly pool: pg.Pool;
  /** The schema holding the tables. */
  readonly schema: string;

  // `ctx.once` results and side records (first-writes.ts), assigned in the constructor.
  readonly getOnce!: FirstWrites["getOnce"];
  readonly putOnce!: FirstWrites["putOnce"];
  readonly getSideRecord!: FirstWrites["getSideRecord"];
  readonly putSideRecord!: FirstWrites["putSideRecord"];

  readonly #ownsPool: boolean;
  readonly #s: string;
  readonly #sql: Statements;
  readonly #codec: RowCodec;
  readonly #chains: AuditChains;

  /** Prepares a saver; call {@link PostgresSaver.setup} (or use `connect`) before using it. */
  constructor(options: PostgresSaverOptions) {
    this.serializer = options.serializer ?? jsonSerializer;
    this.schema = options.schema ?? "rein";
    this.#s = quoteSchema(this.schema);
    this.#ownsPool = options.pool === undefined;
    this.pool = options.pool ?? storePool(options.connectionString, options.statements);
    // An idle pooled connection closed by the server (restart, failover, pg_terminate_backend)
    // emits 'error' on the pool; unheard, that kills the process. The pool drops the client and
    // the next query opens a new one, so the event only needs a listener.
    if (this.#ownsPool) this.pool.on("error", (error) => options.onIdleError?.(error));
    this.#sql = statementsFor(this.#s);
    this.#codec = new RowCodec(this.serializer);
    this.#chains = new AuditChains(this.pool, this.#s, this.#sql, this.serializer);
    Object.assign(this, postgresFirstWrites(this.pool, this.#sql, this.#codec));
  }

  /**
   * Creates a saver and runs its migrations.
   *
   * @throws {SchemaVersionError} when the schema was migrated by a newer Rein.
   */
  static async connect(options: PostgresSaverOptions): Promise<PostgresSaver> {
    const saver = new PostgresSaver(options);
    await saver.setup().catch(async (error: unknown) => {
      await saver.close();
      throw error;
    });
    return saver;
  }

  /**
   * Creates the schema and runs pending migrations (safe to call from many processes at once).
   *
   * @throws {SchemaVersionError} when the schema was migrated by a newer Rein.
   */
  async setup(): Promise<void> {
    await migrate(this.pool, this.schema);
  }

  /** Rows of one statement, on the pool or on a transaction's client; driver errors typed. */
  async #rows<Row extends pg.QueryResultRow>(
    statement: Named,
    values: unknown[],
    via: pg.Pool | pg.PoolClient = this.pool,
  ): Promise<Row[]> {
    return guarded(async () => (await via.query<Row>(checked(statement, values))).rows);
  }

  async #run(statement: Named, values: unknown[]): Promise<number> {
    return guarded(async () => (await this.pool.query(checked(statement, values))).rowCount ?? 0);
  }

  /**
   * Runs one fence-aware write statement (see `fencedWrite` in statements.ts): the fencing token
   * goes last among `values`, the lease check happens in the same statement (one round trip),
   * and a refused fence throws {@link FencedOutError}.
   */
  async #fenced<Row extends { current_token: string | null }>(
    statement: Named,
    values: unknown[],
    fence: Fence | undefined,
  ): Promise<Row | undefined> {
    const [row] = await this.#rows<Row>(statement, [...values, fence?.token ?? null]);
    if (fence) checkFence(fence, row?.current_token == null ? null : Number(row.current_token));
    return row;
  }

  // Threads ------------------------------------------------------------------------------------

  async putThread(thread: ThreadRecord, fence?: Fence): Promise<void> {
    validateThreadId(thread.threadId);
    const values = [...this.#codec.threadParams(thread), this.#codec.threadGraph(thread)];
    await this.#fenced(this.#sql.upsertThread, values, fence);
  }

  async getThread(threadId: ThreadId): Promise<ThreadRecord | undefined> {
    const [row] = await this.#rows<ThreadRow>(this.#sql.getThread, [threadId]);
    return row ? this.#codec.thread(row) : undefined;
  }

  async getThreadHead(
    threadId: ThreadId,
    stream: StreamKey,
    known?: CheckpointRecord,
  ): Promise<ThreadHead> {
    // Only a checkpoint of this thread and stream can stand in for the head row.
    const mine = known?.threadId === threadId && known.stream === stream ? known : undefined;
    const [row] = await this.#rows<{ head: HeadJson }>(this.#sql.getThreadHead, [
      threadId,
      stream,
      mine?.id ?? null,
    ]);
    return decodeHead(this.#codec, row?.head, mine);
  }

  async listThreads(query: {
    tenant?: string | null;
    limit?: number;
    cursor?: string | null;
  }): Promise<{ items: ThreadRecord[]; nextCursor: string | null }> {
    const limit = pageLimit(query.limit);
    const q = threadsQuery(this.#s, query.tenant, decodeCursor(query.cursor), limit);
    const rows = await this.#rows<ThreadRow>(q, q.values);
    const page = keysetSlice(rows, limit, (row) => encodeCursor([row.created_at, row.thread_id]));
    return { items: page.rows.map((row) => this.#codec.thread(row)), nextCursor: page.nextCursor };
  }

  async deleteThread(threadId: ThreadId): Promise<void> {
    await this.#run(this.#sql.deleteThread, [threadId]);
  }

  // Checkpoints --------------------------------------------------------------------------------

  async commitStep(commit: StepCommit): Promise<void> {
    validateThreadId(commit.checkpoint.threadId);
    await commitStep(this.pool, this.#sql, this.#codec, commit);
  }

  async getCheckpoint(
    threadId: ThreadId,
    stream: StreamKey,
    id?: CheckpointId,
  ): Promise<CheckpointRecord | undefined> {
    const [row] =
      id === undefined
        ? await this.#rows<CheckpointRow>(this.#sql.getHeadCheckpoint, [threadId, stream])
        : await this.#rows<CheckpointRow>(this.#sql.getCheckpoint, [threadId, stream, id]);
    return row ? this.#codec.checkpoint(row) : undefined;
  }

  async listCheckpoints(
    threadId: ThreadId,
    stream: StreamKey,
    options: { limit?: number; before?: CheckpointId } = {},
  ): Promise<CheckpointRecord[]> {
    // LIMIT NULL is no limit.
    const limit = options.limit === undefined ? null : Math.max(0, Math.floor(options.limit));
    const rows =
      options.before === undefined
        ? await this.#rows<CheckpointRow>(this.#sql.listCheckpoints, [threadId, stream, limit])
        : await this.#rows<CheckpointRow>(this.#sql.listCheckpointsBefore, [
            threadId,
            stream,
            options.before,
            limit,
          ]);
    return rows.map((row) => this.#codec.checkpoint(row));
  }

  async getChannelValues(
    threadId: ThreadId,
    stream: StreamKey,
    versions: Record<string, string>,
  ): Promise<Record<string, unknown>> {
    return channelValues(this.pool, this.#sql, this.#codec, [threadId, stream], versions);
  }

  // Task results -------------------------------------------------------------------------------

  async putTaskOutcome(outcome: TaskOutcome): Promise<PendingPage | void> {
    const { result } = outcome;
    const inserted = new Set(outcome.interrupts.map((i) => i.id));
    const limit = outcome.thenReadPending;
    const [row] = await this.#rows<{
      r: {
        applied: number;
        current_token: number | null;
        page: { total: number; items: InterruptRow[] } | null;
      };
    }>(this.#sql.putTaskOutcome, [
      outcome.threadId,
      outcome.stream,
      outcome.checkpointId,
      result.taskId,
      result.kind,
      this.#codec.taskValue(result),
      ...this.#codec.interruptArrays(outcome.interrupts),
      // A row may change once per statement: ids re-inserted above are not also superseded.
      outcome.superseded.filter((id) => !inserted.has(id)),
      outcome.fence?.token ?? null,
      ...this.#codec.runArrays(outcome.runs ?? []),
      outcome.releaseLease === true,
      this.#codec.interruptRootGraphs(outcome.interrupts),
      limit === undefined ? null : Math.max(0, Math.floor(limit)),
      this.#codec.interruptPolicies(outcome.interrupts),
    ]);
    const written = row?.r;
    if (outcome.fence && written?.applied !== 1)
      checkFence(
        outcome.fence,
        written?.current_token == null ? null : Number(written.current_token),
      );
    const page = written?.page;
    if (page) return lazyPendingPage(page.items, page.total, (item) => this.#codec.interrupt(item));
  }

  async getTaskResults(
    threadId: ThreadId,
    stream: StreamKey,
    checkpointId: CheckpointId,
  ): Promise<TaskResult[]> {
    const rows = await this.#rows<TaskResultRow>(this.#sql.listTaskResults, [
      threadId,
      stream,
      checkpointId,
    ]);
    return rows.map((row) => this.#codec.taskResult(row));
  }

  async getTaskResultKinds(
    threadId: ThreadId,
    stream: StreamKey,
    checkpointId: CheckpointId,
  ): Promise<TaskResultKind[]> {
    const rows = await this.#rows<{ task_id: string; kind: string }>(this.#sql.taskResultKinds, [
      threadId,
      stream,
      checkpointId,
    ]);
    return rows.map((row) => ({
      taskId: row.task_id as TaskId,
      kind: row.kind as TaskResultKind["kind"],
    }));
  }

  // Interrupts ---------------------------------------------------------------------------------

  async getInterrupt(id: InterruptId): Promise<StoredInterrupt | undefined> {
    const [row] = await this.#rows<InterruptRow>(this.#sql.getInterrupt, [id]);
    return row ? this.#codec.interrupt(row) : undefined;
  }

  async getInterrupts(ids: readonly InterruptId[]): Promise<StoredInterrupt[]> {
    const rows = await this.#rows<InterruptRow>(this.#sql.interruptsById, [ids]);
    return rows.map((row) => this.#codec.interrupt(row));
  }

  async getPendingInterrupts(threadId: ThreadId, limit: number): Promise<PendingPage> {
    const [row] = await this.#rows<{ total: number; items: InterruptRow[] }>(
      this.#sql.pendingPage,
      [threadId, Math.max(0, Math.floor(limit))],
    );
    return lazyPendingPage(row?.items ?? [], row?.total ?? 0, (item) =>
      this.#codec.interrupt(item),
    );
  }

  async getTaskInterrupts(
    threadId: ThreadId,
    taskIds: readonly TaskId[],
  ): Promise<StoredInterrupt[]> {
    const rows = await this.#rows<InterruptRow>(this.#sql.taskInterrupts, [threadId, taskIds]);
    return rows.map((row) => this.#codec.interrupt(row));
  }

  async getThreadInterrupts(
    threadId: ThreadId,
    status?: InterruptStatus,
  ): Promise<StoredInterrupt[]> {
    const rows = await this.#rows<InterruptRow>(this.#sql.threadInterrupts, [
      threadId,
      status ?? null,
    ]);
    return rows.map((row) => this.#codec.interrupt(row));
  }

  async listInterrupts(query: InterruptQuery): Promise<InterruptPage> {
    const limit = pageLimit(query.limit);
    const q = interruptsQuery(this.#s, query, decodeCursor(query.cursor), limit);
    const count = query.count === true ? interruptCountQuery(this.#s, query) : null;
    const [rows, counted] = await Promise.all([
      this.#rows<InterruptRow>(q, q.values),
      count ? this.#rows<{ total: number }>(count, count.values) : null,
    ]);
    const page = keysetSlice(rows, limit, (row) => encodeCursor([row.created_at, row.id]));
    return {
      items: page.rows.map((row) => this.#codec.interrupt(row)),
      nextCursor: page.nextCursor,
      ...(counted ? { total: counted[0]?.total ?? 0 } : {}),
    };
  }

  listExpiredInterrupts(now: string, limit: number): Promise<StoredInterrupt[]> {
    return expiredInterrupts(this.pool, this.#sql, this.#codec, now, limit);
  }

  readonly takeLadderStep: Checkpointer["takeLadderStep"] = (step) =>
    takeLadderStep(this.pool, this.#sql, this.#codec, step);

  readonly summarizePending = (): Promise<PendingSummary[]> =>
    this.#rows<PendingSummary & pg.QueryResultRow>(this.#sql.pendingSummary, []);

  answerBatches(batches: readonly AnswerBatch[]): Promise<BatchesOutcome> {
    return answerBatches(this.pool, this.#sql, this.#codec, batches);
  }

  async answerInterrupts(batch: AnswerBatch): Promise<AnswerOutcome> {
    const { outcome, continuation } = await answerInterrupts(
      this.pool,
      this.#sql,
      this.#codec,
      batch,
    );
    const ask = batch.thenRead;
    if (!outcome.ok || !continuation || !ask) return outcome;
    const key: [string, string] = [batch.threadId, ""];
    const values = await channelValues(this.pool, this.#sql, this.#codec, key, ask.head.versions, [
      ...continuation.chains,
    ]);
    return { ok: true, reads: decodeContinuation(this.#codec, continuation, ask, values) };
  }

  // Request ids --------------------------------------------------------------------------------

  async putRequestResult(requestId: string, result: unknown, fence?: Fence): Promise<void> {
    const values = [requestId, this.#codec.encode(result), fence?.threadId ?? null];
    await this.#fenced(this.#sql.putRequestResult, values, fence);
  }

  async getRequestResult(requestId: string): Promise<{ result: unknown } | undefined> {
    const [row] = await this.#rows<{ result: string | null }>(this.#sql.getRequest, [requestId]);
    if (!row) return undefined;
    return { result: row.result === null ? undefined : this.#codec.decode(row.result) };
  }

  // Runs ---------------------------------------------------------------------------------------

  async putRun(run: RunRecord, fence?: Fence): Promise<void> {
    const values = [
      run.runId,
      run.threadId,
      run.createdAt,
      run.updatedAt,
      run.status,
      run.parentRunId === null,
      this.#codec.runValue(run),
    ];
    await this.#fenced(this.#sql.upsertRun, values, fence);
  }

  async listRunsByStatus(
    query: RunQuery,
  ): Promise<{ items: RunRecord[]; nextCursor: string | null }> {
    const limit = pageLimit(query.limit);
    const [afterAt, afterId] = decodeCursor(query.cursor) ?? ["", ""];
    const rows = await this.#rows<RunRow>(this.#sql.runsByStatus, [
      query.status,
      query.rootOnly ?? false,
      afterAt,
      afterId,
      limit + 1,
    ]);
    const page = keysetSlice(rows, limit, (row) => encodeCursor([row.updated_at, row.run_id]));
    return {
      items: page.rows.map((row) => this.#codec.run(row)),
      nextCursor: page.nextCursor,
    };
  }

  async getRun(runId: RunId): Promise<RunRecord | undefined> {
    const [row] = await this.#rows<RunRow>(this.#sql.getRun, [runId]);
    return row ? this.#codec.run(row) : undefined;
  }

  async listRuns(threadId: ThreadId): Promise<RunRecord[]> {
    const rows = await this.#rows<RunRow>(this.#sql.listRuns, [threadId]);
    return rows.map((row) => this.#codec.run(row));
  }

  // Steering and audit -------------------------------------------------------------------------

  async appendSteering(record: SteeringRecord, fence?: Fence): Promise<void> {
    const values = [record.id, record.threadId, this.#codec.encode(record)];
    await this.#fenced(this.#sql.insertSteering, values, fence);
  }

  async listSteering(threadId: ThreadId): Promise<SteeringRecord[]> {
    const rows = await this.#rows<{ record: string }>(this.#sql.listSteering, [threadId]);
    return rows.map((row) => this.#codec.decode<SteeringRecord>(row.record));
  }

  async appendAudit(record: AuditRecord, fence?: Fence): Promise<void> {
    const values = [record.threadId, this.#codec.encode(record)];
    await this.#fenced(this.#sql.insertAudit, values, fence);
  }

  async listAudit(query: AuditQuery): Promise<{ items: AuditRecord[]; nextCursor: string | null }> {
    const limit = pageLimit(query.limit);
    const q = auditQuery(this.#s, query, decodeSeqCursor(query.cursor), limit);
    // bigint identities arrive as strings: they are only echoed back as cursors.
    const rows = await this.#rows<{ seq: string; record: string }>(q, q.values);
    const page = keysetSlice(rows, limit, (row) => row.seq);
    return {
      items: page.rows.map((row) => this.#codec.decode<AuditRecord>(row.record)),
      nextCursor: page.nextCursor,
    };
  }

  listAuditChain(query: AuditChainQuery): ReturnType<Checkpointer["listAuditChain"]> {
    return this.#chains.listAuditChain(query);
  }

  verifyAudit(query: AuditVerifyQuery): Promise<AuditVerification> {
    return verifyAuditChains(this.#chains, query);
  }

  // Leases -------------------------------------------------------------------------------------

  async acquireLease(threadId: ThreadId, owner: string, ttlMs: number): Promise<number | null> {
    validateThreadId(threadId);
    const values = [threadId, owner, ttlMs];
    const [row] = await this.#rows<{ token: string }>(this.#sql.acquireLease, values);
    return row ? Number(row.token) : null;
  }

  async acquireLeaseAndRead(
    threadId: ThreadId,
    owner: string,
    ttlMs: number,
    reads: LeaseReads,
  ): Promise<{ token: number; reads: LeaseReadResults } | null> {
    validateThreadId(threadId);
    // Only a root head of this thread can stand in for the head row.
    const known =
      reads.known?.threadId === threadId && reads.known.stream === "" ? reads.known : undefined;
    const [row] = await this.#rows<{ r: LeaseJson | null }>(this.#sql.leaseAndRead, [
      threadId,
      owner,
      ttlMs,
      known?.id ?? null,
      reads.requestId ?? null,
      reads.pendingLimit === undefined ? null : Math.max(0, Math.floor(reads.pendingLimit)),
      reads.interruptIds ?? null,
      reads.runId ?? null,
    ]);
    if (!row?.r) return null;
    const asked = { ...reads, known };
    return { token: Number(row.r.token), reads: decodeLeaseReads(this.#codec, row.r, asked) };
  }

  async renewLease(threadId: ThreadId, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.#run(this.#sql.renewLease, [threadId, owner, ttlMs])) === 1;
  }

  async releaseLease(threadId: ThreadId, owner: string): Promise<void> {
    await this.#run(this.#sql.releaseLease, [threadId, owner]);
  }

  async getLease(threadId: ThreadId): Promise<LeaseRecord | undefined> {
    const [row] = await this.#rows<{ owner: string; expires_at: Date; token: string }>(
      this.#sql.getLease,
      [threadId],
    );
    return row
      ? { owner: row.owner, expiresAt: row.expires_at.toISOString(), token: Number(row.token) }
      : undefined;
  }

  /** Ends the pool if this saver created it; a pool you passed in stays yours to end. */
  async close(): Promise<void> {
    if (this.#ownsPool && !this.pool.ended) await this.pool.end();
  }
}
