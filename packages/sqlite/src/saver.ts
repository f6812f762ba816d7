/**
 * {@link SqliteSaver}: the embedded default checkpointer, one SQLite file in WAL mode.
 */
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { DatabaseSync } from "node:sqlite";
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
import { applyAnswers } from "./answers.ts";
import { encodeCommit, writeCommit } from "./commit.ts";
import { RowCodec } from "./codec.ts";
import { sqliteFirstWrites, type FirstWrites } from "./first-writes.ts";
import { migrate } from "./migrations.ts";
import {
  EVERY_CAPABILITY,
  chainFromRange,
  chainLengthOfVersion,
  checkFence,
  lazyPendingPage,
  sameHead,
  validateThreadId,
  verifyAuditChains,
  type AnswerBatch,
  type AnswerOutcome,
  type BatchesOutcome,
  type AuditChainEntry,
  type AuditChainQuery,
  type AuditQuery,
  type AuditVerification,
  type AuditVerifyQuery,
  type CheckpointRecord,
  type Checkpointer,
  type Fence,
  type InterruptPage,
  type InterruptQuery,
  type LadderStepWrite,
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
  type NarrowReadStore,
  type ThreadHead,
  type ThreadRecord,
} from "@rein/core/store";
import { AuditChains, appendAuditLine } from "./audit.ts";
import { encodeLadderStep, writeLadderStep } from "./ladder.ts";
import { SqliteWebhooks } from "./webhooks.ts";
import { SqliteApiKeys } from "./api-keys.ts";
import { configureConnection, transactions, type Transactions } from "./driver.ts";
import { openError, openStoreFile, settle } from "./errors.ts";
import { ListQueries } from "./queries.ts";
import { stepKindsReader } from "./step-kinds.ts";
import { prepareStatements, type ChainRow, type Statements } from "./statements.ts";

/** Options of {@link SqliteSaver}. */
export interface SqliteSaverOptions {
  /** Database file, or `":memory:"` for a private in-memory database. */
  path: string;
  /** How values are encoded; defaults to the JSON serializer with tagged types. */
  serializer?: Serializer;
  /**
   * When a commit reaches the disk. `"normal"` (default; WAL + `synchronous=NORMAL`): a commit is
   * in the WAL file when the call returns, so it survives the process being killed (SIGKILL, a
   * crash, an OOM kill); only an OS crash or power loss may roll back the last commits (the
   * database is never corrupted). `"full"` also fsyncs the WAL at every commit, surviving power
   * loss at the cost of one fsync per step: choose it when a machine crash must not forget an
   * answer or a `ctx.once` result.
   */
  synchronous?: "full" | "normal";
  /** How long a writer waits for another process's lock before failing, in ms. Default 5000. */
  busyTimeoutMs?: number;
  /**
   * The time leases are taken, renewed and expire against; defaults to the system clock. A test
   * passes a clock it moves forward to expire a lease instead of sleeping past its TTL.
   */
  clock?: () => Date;
}

/**
 * A {@link Checkpointer} on one SQLite file (Node's built-in `node:sqlite`), the embedded default.
 *
 * The file is opened in WAL mode so readers never block the writer, with a busy timeout so
 * several processes can share it. Schema migrations run on open. Every method that writes several
 * rows does so in one transaction; `commitStep` and `answerInterrupts` take the write lock up
 * front (`BEGIN IMMEDIATE`) so their compare-and-set checks and writes cannot interleave with
 * another process's.
 *
 * @example
 * ```ts
 * const saver = SqliteSaver.open("rein.db");
 * const graph = builder.compile({ checkpointer: saver });
 * ```
 *
 * @throws {SchemaVersionError} from the constructor when the file's schema is newer than this code.
 * @throws {StoreUnavailableError} from the constructor when the file is damaged or not a store.
 */
export class SqliteSaver implements Checkpointer {
  /** The serializer values are stored with. */
  readonly serializer: Serializer;
  /** Every capability: this store implements them all. */
  readonly capabilities = EVERY_CAPABILITY;
  /** The webhook outbox of this file, on this connection. */
  readonly webhooks: SqliteWebhooks;
  /** The API keys of this file, on this connection. */
  readonly apiKeys = new SqliteApiKeys(this);
  /** The underlying connection, for diagnostics and tests. */
  readonly db: DatabaseSync;

  readonly #sql: Statements;
  readonly #lists: ListQueries;
  readonly #chains: AuditChains;
  // `ctx.once` results and side records (first-writes.ts), assigned in the constructor.
  readonly getOnce!: FirstWrites["getOnce"];
  readonly putOnce!: FirstWrites["putOnce"];
  readonly getSideRecord!: FirstWrites["getSideRecord"];
  readonly putSideRecord!: FirstWrites["putSideRecord"];
  /** The kinds of a step's results (step-kinds.ts), assigned in the constructor. */
  readonly getTaskResultKinds!: NarrowReadStore["getTaskResultKinds"];
  readonly #codec: RowCodec;
  readonly #transactions: Transactions;
  readonly #clock: () => Date;
  #closed = false;

  /** Opens (creating if needed) and migrates the database. */
  constructor(options: SqliteSaverOptions) {
    this.serializer = options.serializer ?? jsonSerializer;
    this.#clock = options.clock ?? (() => new Date());
    this.#codec = new RowCodec(this.serializer);
    // A fresh checkout has no data directory yet: create the file's folder rather than fail.
    if (options.path !== ":memory:" && options.path !== "")
      mkdirSync(dirname(resolve(options.path)), { recursive: true });
    this.db = openStoreFile(options.path);
    this.webhooks = new SqliteWebhooks(this);
    try {
      configureConnection(this.db, options);
      migrate(this.db);
      this.#sql = prepareStatements(this.db);
      this.#lists = new ListQueries(this.db, this.#codec);
      this.#chains = new AuditChains(this.db, this.#sql, this.serializer);
      this.#transactions = transactions(this.db);
      Object.assign(
        this,
        sqliteFirstWrites(this.#sql, this.#codec, this.#clock, (f, w) => this.#fenced(f, w)),
        { getTaskResultKinds: stepKindsReader(this.#sql) },
      );
    } catch (error) {
      this.db.close();
      throw openError(options.path, error);
    }
  }

  /**
   * Runs `body` in a `BEGIN IMMEDIATE` transaction. Every write takes the write lock up front:
   * a deferred transaction that reads and then writes can fail with SQLITE_BUSY instead of
   * waiting when another process wrote in between, and its checks would be stale.
   */
  #write<T>(body: () => T): T {
    return this.#transactions.immediate(body);
  }

  /**
   * Runs `body` as a write. With a fence, in a `BEGIN IMMEDIATE` transaction that first checks
   * the thread's fencing token, so a stale lease holder writes nothing; without one, as is.
   */
  #fenced<T>(fence: Fence | undefined, body: () => T): T {
    if (fence === undefined) return body();
    return this.#write(() => {
      this.#checkFence(fence);
      return body();
    });
  }

  /** Throws when `fence` is not the thread's current token. Call inside a write transaction. */
  #checkFence(fence: Fence | undefined): void {
    if (fence) checkFence(fence, this.#sql.leaseToken.get(fence.threadId)?.token ?? null);
  }

  /** Opens the database file at `path` with the default options. */
  static open(path: string): SqliteSaver {
    return new SqliteSaver({ path });
  }

  // Threads ------------------------------------------------------------------------------------

  putThread(thread: ThreadRecord, fence?: Fence): Promise<void> {
    return settle(() => {
      validateThreadId(thread.threadId);
      const row = this.#codec.threadRow(thread);
      this.#fenced(fence, () => this.#sql.upsertThread.run(row));
    });
  }

  getThread(threadId: ThreadId): Promise<ThreadRecord | undefined> {
    return settle(() => {
      const row = this.#sql.getThread.get(threadId);
      return row ? this.#codec.thread(row) : undefined;
    });
  }

  getThreadHead(
    threadId: ThreadId,
    stream: StreamKey,
    known?: CheckpointRecord,
  ): Promise<ThreadHead> {
    return settle(() =>
      // One read transaction: the four reads see one state even while another process writes.
      this.#transactions.deferred(() => {
        // A head the caller holds is recognised by its id: its row is neither read nor decoded.
        const id = known && this.#sql.getHeadId.get(threadId, stream);
        const reuse = known !== undefined && sameHead(known, id?.checkpoint_id, threadId, stream);
        const head = reuse ? undefined : this.#sql.getHeadCheckpoint.get(threadId, stream);
        const runId = reuse ? id?.run_id : head?.run_id;
        const run = runId === undefined ? undefined : this.#sql.getRun.get(runId);
        const thread = this.#sql.getThread.get(threadId);
        return {
          checkpoint: reuse ? known : head ? this.#codec.checkpoint(head) : undefined,
          run: run ? this.#codec.run(run) : undefined,
          thread: thread ? this.#codec.thread(thread) : undefined,
          pendingInterrupts: this.#sql.pendingCount.get(threadId)?.n ?? 0,
          steering: this.#steering(threadId),
        };
      }),
    );
  }

  listThreads(query: { tenant?: string | null; limit?: number; cursor?: string | null }): Promise<{
    items: ThreadRecord[];
    nextCursor: string | null;
  }> {
    return settle(() => this.#lists.threadsPage(query));
  }

  deleteThread(threadId: ThreadId): Promise<void> {
    return settle(() => {
      this.#write(() => {
        for (const statement of this.#sql.deleteThread) statement.run(threadId);
        // The lease row stays (expired): its token must keep growing if the thread is made again.
        this.#sql.expireLease.run(threadId);
      });
    });
  }

  // Checkpoints --------------------------------------------------------------------------------

  commitStep(commit: StepCommit): Promise<void> {
    return settle(() => {
      validateThreadId(commit.checkpoint.threadId);
      const encoded = encodeCommit(this.#codec, commit);
      this.#write(() => {
        this.#checkFence(commit.fence);
        writeCommit(this.#sql, commit, encoded);
        if (commit.releaseLease) this.#releaseFenced(commit.fence);
      });
    });
  }

  getCheckpoint(
    threadId: ThreadId,
    stream: StreamKey,
    id?: CheckpointId,
  ): Promise<CheckpointRecord | undefined> {
    return settle(() => {
      const row =
        id === undefined
          ? this.#sql.getHeadCheckpoint.get(threadId, stream)
          : this.#sql.getCheckpoint.get(threadId, stream, id);
      return row ? this.#codec.checkpoint(row) : undefined;
    });
  }

  listCheckpoints(
    threadId: ThreadId,
    stream: StreamKey,
    options: { limit?: number; before?: CheckpointId } = {},
  ): Promise<CheckpointRecord[]> {
    return settle(() => {
      // SQLite reads a negative LIMIT as "no limit".
      const limit = options.limit === undefined ? -1 : Math.max(0, Math.floor(options.limit));
      const rows =
        options.before === undefined
          ? this.#sql.listCheckpoints.all(threadId, stream, limit)
          : this.#sql.listCheckpointsBefore.all(threadId, stream, options.before, limit);
      return rows.map((row) => this.#codec.checkpoint(row));
    });
  }

  getChannelValues(
    threadId: ThreadId,
    stream: StreamKey,
    versions: Record<string, string>,
  ): Promise<Record<string, unknown>> {
    return settle(() => {
      const wanted = Object.entries(versions);
      const links: ChainRow[] = [];
      const forked: Record<string, string> = {};
      for (const [channel, version] of wanted) {
        const range = this.#sql.chainRange.all(
          threadId,
          stream,
          channel,
          version,
          chainLengthOfVersion(version),
        );
        const chain = chainFromRange(version, range);
        if (chain) for (const link of chain) links.push({ channel, depth: 0, ...link });
        else forked[channel] = version;
      }
      if (Object.keys(forked).length > 0) {
        const params = { thread: threadId, stream, versions: JSON.stringify(forked) };
        links.push(...this.#sql.readChains.all(params));
      }
      return this.#codec.channelValues(wanted, links);
    });
  }

  // Task results -------------------------------------------------------------------------------

  putTaskOutcome(outcome: TaskOutcome): Promise<void> {
    return settle(() => {
      const { threadId, stream, checkpointId, result } = outcome;
      const value = this.#codec.taskValue(result);
      const interrupts = outcome.interrupts.map((i) => this.#codec.interruptParams(i));
      const runs = (outcome.runs ?? []).map((r) => this.#codec.runParams(r));
      const sql = this.#sql;
      this.#write(() => {
        this.#checkFence(outcome.fence);
        if (outcome.releaseLease) this.#releaseFenced(outcome.fence);
        // No change means the task already has a `writes` result: the outcome is ignored.
        const params = [threadId, stream, checkpointId, result.taskId, result.kind, value] as const;
        if (sql.putTaskResult.run(...params).changes === 0) return;
        for (const params of interrupts) sql.upsertInterrupt.run(params);
        if (outcome.superseded.length > 0) {
          sql.supersede.run(JSON.stringify(outcome.superseded));
        }
        for (const params of runs) sql.upsertRun.run(params);
      });
    });
  }

  getTaskResults(
    threadId: ThreadId,
    stream: StreamKey,
    checkpointId: CheckpointId,
  ): Promise<TaskResult[]> {
    return settle(() =>
      this.#sql.listTaskResults
        .all(threadId, stream, checkpointId)
        .map((row) => this.#codec.taskResult(row)),
    );
  }

  // Interrupts ---------------------------------------------------------------------------------

  getInterrupt(id: InterruptId): Promise<StoredInterrupt | undefined> {
    return settle(() => {
      const row = this.#sql.getInterrupt.get(id);
      return row ? this.#codec.interrupt(row) : undefined;
    });
  }

  getInterrupts(ids: readonly InterruptId[]): Promise<StoredInterrupt[]> {
    return settle(() =>
      this.#sql.interruptsById.all(JSON.stringify(ids)).map((row) => this.#codec.interrupt(row)),
    );
  }

  getPendingInterrupts(threadId: ThreadId, limit: number): Promise<PendingPage> {
    return settle(() =>
      // One read transaction: the page and the count see one state.
      this.#transactions.deferred(() =>
        lazyPendingPage(
          this.#sql.pendingPage.all(threadId, Math.max(0, Math.floor(limit))),
          this.#sql.pendingCount.get(threadId)?.n ?? 0,
          (row) => this.#codec.interrupt(row),
        ),
      ),
    );
  }

  getTaskInterrupts(threadId: ThreadId, taskIds: readonly TaskId[]): Promise<StoredInterrupt[]> {
    return settle(() =>
      this.#sql.taskInterrupts
        .all(threadId, JSON.stringify(taskIds))
        .map((row) => this.#codec.interrupt(row)),
    );
  }

  getThreadInterrupts(threadId: ThreadId, status?: InterruptStatus): Promise<StoredInterrupt[]> {
    return settle(() => {
      const rows =
        status === undefined
          ? this.#sql.threadInterrupts.all(threadId)
          : this.#sql.threadInterruptsByStatus.all(threadId, status);
      return rows.map((row) => this.#codec.interrupt(row));
    });
  }

  listInterrupts(query: InterruptQuery): Promise<InterruptPage> {
    return settle(() => this.#lists.interruptsPage(query));
  }

  listExpiredInterrupts(now: string, limit: number): Promise<StoredInterrupt[]> {
    return settle(() =>
      this.#sql.expiredInterrupts.all(now, limit).map((row) => this.#codec.interrupt(row)),
    );
  }

  takeLadderStep(step: LadderStepWrite): Promise<boolean> {
    return settle(() => {
      const encoded = encodeLadderStep(this.#codec, step);
      return this.#write(() => writeLadderStep(this.#sql, step, encoded));
    });
  }

  summarizePending(): Promise<PendingSummary[]> {
    // The statement names its columns as the summary does.
    return settle(() => this.#sql.pendingSummary.all().map((row) => ({ ...row })));
  }

  answerInterrupts(batch: AnswerBatch): Promise<AnswerOutcome> {
    return settle(() =>
      this.#write(() => {
        this.#checkFence(batch.fence);
        return applyAnswers(this.#sql, this.#codec, batch);
      }),
    );
  }

  answerBatches(batches: readonly AnswerBatch[]): Promise<BatchesOutcome> {
    return settle(() => {
      try {
        return this.#write(() => {
          const outcomes: Extract<AnswerOutcome, { ok: true }>[] = [];
          for (const [index, batch] of batches.entries()) {
            this.#checkFence(batch.fence);
            const outcome = applyAnswers(this.#sql, this.#codec, batch);
            // Thrown so the transaction rolls back what the batches before it wrote.
            if (!outcome.ok) throw new RefusedBatch({ ok: false, index, outcome });
            outcomes.push(outcome);
          }
          return { ok: true as const, outcomes };
        });
      } catch (error) {
        if (error instanceof RefusedBatch) return error.outcome;
        throw error;
      }
    });
  }

  // Request ids --------------------------------------------------------------------------------

  putRequestResult(requestId: string, result: unknown, fence?: Fence): Promise<void> {
    return settle(() => {
      const text = this.#codec.encode(result);
      this.#fenced(fence, () => this.#sql.putRequestResult.run(requestId, text));
    });
  }

  getRequestResult(requestId: string): Promise<{ result: unknown } | undefined> {
    return settle(() => {
      const row = this.#sql.getRequest.get(requestId);
      if (!row) return undefined;
      return { result: row.result === null ? undefined : this.#codec.decode(row.result) };
    });
  }

  // Runs ---------------------------------------------------------------------------------------

  putRun(run: RunRecord, fence?: Fence): Promise<void> {
    return settle(() => {
      const params = this.#codec.runParams(run);
      this.#fenced(fence, () => this.#sql.upsertRun.run(params));
    });
  }

  listRunsByStatus(query: RunQuery): Promise<{ items: RunRecord[]; nextCursor: string | null }> {
    return settle(() => this.#lists.runsPage(query));
  }

  getRun(runId: RunId): Promise<RunRecord | undefined> {
    return settle(() => {
      const row = this.#sql.getRun.get(runId);
      return row ? this.#codec.run(row) : undefined;
    });
  }

  listRuns(threadId: ThreadId): Promise<RunRecord[]> {
    return settle(() => this.#sql.listRuns.all(threadId).map((row) => this.#codec.run(row)));
  }

  // Steering and audit -------------------------------------------------------------------------

  appendSteering(record: SteeringRecord, fence?: Fence): Promise<void> {
    return settle(() => {
      const text = this.#codec.encode(record);
      this.#fenced(fence, () => this.#sql.insertSteering.run(record.id, record.threadId, text));
    });
  }

  listSteering(threadId: ThreadId): Promise<SteeringRecord[]> {
    return settle(() => this.#steering(threadId));
  }

  #steering(threadId: ThreadId): SteeringRecord[] {
    return this.#sql.listSteering
      .all(threadId)
      .map((row) => this.#codec.decode<SteeringRecord>(row.record));
  }

  appendAudit(record: AuditRecord, fence?: Fence): Promise<void> {
    return settle(() => {
      const text = this.#codec.encode(record);
      // Always a write transaction: the chain's head read and the insert must not interleave.
      this.#write(() => {
        this.#checkFence(fence);
        appendAuditLine(this.#sql, record.threadId, text);
      });
    });
  }

  listAudit(query: AuditQuery): Promise<{ items: AuditRecord[]; nextCursor: string | null }> {
    return settle(() => this.#lists.auditPage(query));
  }

  listAuditChain(
    query: AuditChainQuery,
  ): Promise<{ items: AuditChainEntry[]; nextCursor: string | null }> {
    return this.#chains.listAuditChain(query);
  }

  verifyAudit(query: AuditVerifyQuery): Promise<AuditVerification> {
    return verifyAuditChains(this.#chains, query);
  }

  // Leases -------------------------------------------------------------------------------------

  acquireLease(threadId: ThreadId, owner: string, ttlMs: number): Promise<number | null> {
    return settle(() => {
      validateThreadId(threadId);
      const now = this.#clock().getTime();
      const params = { thread: threadId, owner, now, expires: now + ttlMs };
      return this.#sql.acquireLease.get(params)?.token ?? null;
    });
  }

  renewLease(threadId: ThreadId, owner: string, ttlMs: number): Promise<boolean> {
    return settle(() => {
      const now = this.#clock().getTime();
      const params = { thread: threadId, owner, now, expires: now + ttlMs };
      return this.#sql.renewLease.run(params).changes === 1;
    });
  }

  releaseLease(threadId: ThreadId, owner: string): Promise<void> {
    return settle(() => {
      this.#sql.releaseLease.run(threadId, owner);
    });
  }

  /** Ends the lease `fence` proves, inside the caller's write transaction (`releaseLease`). */
  #releaseFenced(fence: Fence | undefined): void {
    if (fence) this.#sql.releaseFencedLease.run(fence.threadId, fence.token);
  }

  getLease(threadId: ThreadId): Promise<LeaseRecord | undefined> {
    return settle(() => {
      const row = this.#sql.getLease.get(threadId, this.#clock().getTime());
      return row
        ? { owner: row.owner, expiresAt: new Date(row.expires_at).toISOString(), token: row.token }
        : undefined;
    });
  }

  /** Closes the database (idempotent). */
  close(): Promise<void> {
    return settle(() => {
      if (this.#closed) return;
      this.#closed = true;
      this.db.close();
    });
  }
}

/** Unwinds {@link SqliteSaver.answerBatches}'s transaction when one batch is refused. */
class RefusedBatch extends Error {
  constructor(readonly outcome: Extract<BatchesOutcome, { ok: false }>) {
    super("A batch of the answer was refused; nothing was written.");
  }
}
