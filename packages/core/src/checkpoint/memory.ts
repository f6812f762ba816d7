/**
 * In-memory {@link Checkpointer} for tests, demos and benchmarks.
 *
 * Values are kept *serialized* (strings from the serializer), never as live objects: a caller that
 * mutates what it passed in or got back cannot change stored state, and a value that a durable
 * store would refuse is refused here too. Every method runs synchronously inside its promise, so
 * each call is atomic with respect to the others, as a transaction would be; each encodes its
 * values before it changes anything, so a refused value writes nothing.
 */
import { randomUUID } from "node:crypto";
import { NotFoundError } from "../errors.ts";
import {
  validateThreadId,
  type CheckpointId,
  type InterruptId,
  type RunId,
  type TaskId,
  type ThreadId,
} from "../ids.ts";
import { jsonSerializer, type Serializer } from "../serde.ts";
import type { AuditRecord, InterruptStatus, SteeringRecord } from "../types.ts";
import { InterruptTable } from "./memory-interrupts.ts";
import {
  checkFence,
  compareOldestFirst,
  conflictError,
  decodeCursor,
  encodeCursor,
  FINAL_RUN_STATUSES,
  insertSorted,
  keysetPage,
  lowerBound,
  pageLimit,
  rebuildChannelValue,
  settle,
} from "./store-kit.ts";
import type {
  AnswerBatch,
  AnswerOutcome,
  AuditQuery,
  CheckpointRecord,
  Checkpointer,
  Fence,
  InterruptPage,
  InterruptQuery,
  LeaseRecord,
  RunQuery,
  RunRecord,
  StepCommit,
  StoredInterrupt,
  StreamKey,
  TaskOutcome,
  TaskResult,
  ThreadRecord,
} from "./types.ts";

/** Options of {@link MemorySaver}. */
export interface MemorySaverOptions {
  /** How values are encoded; defaults to {@link jsonSerializer}. */
  serializer?: Serializer;
}

interface StoredBlob {
  kind: "full" | "delta";
  prev: string | null;
  value: string;
}

interface StreamState {
  head: CheckpointId | null;
  /** Checkpoint ids in ascending order (commits almost always append). */
  order: CheckpointId[];
  checkpoints: Map<CheckpointId, string>;
  /** channel → version → blob. */
  blobs: Map<string, Map<string, StoredBlob>>;
  /** checkpoint → task → serialized result (a Map keeps insertion order). */
  tasks: Map<CheckpointId, Map<TaskId, { kind: TaskResult["kind"]; data: string }>>;
}

interface ThreadState {
  record: { tenant: string | null; createdAt: string; data: string } | null;
  streams: Map<StreamKey, StreamState>;
  steering: string[];
  once: Map<string, string>;
  runs: Set<RunId>;
  requests: Set<string>;
}

interface RunRow {
  seq: number;
  threadId: ThreadId;
  createdAt: string;
  updatedAt: string;
  status: RunRecord["status"];
  root: boolean;
  data: string;
}

/**
 * A {@link Checkpointer} that keeps everything in process memory: Maps keyed by thread and
 * stream, arrays for history. A step commit costs a few microseconds.
 *
 * @example
 * ```ts
 * const graph = builder.compile({ checkpointer: new MemorySaver() });
 * ```
 */
export class MemorySaver implements Checkpointer {
  /** The serializer values are stored with. */
  readonly serializer: Serializer;

  readonly #threads = new Map<ThreadId, ThreadState>();
  readonly #interrupts: InterruptTable;
  readonly #runs = new Map<RunId, RunRow>();
  readonly #audit: { seq: number; threadId: ThreadId; data: string }[] = [];
  readonly #requests = new Map<string, { result: string | undefined }>();
  readonly #leases = new Map<ThreadId, { owner: string; expiresAt: number; token: number }>();
  #seq = 0;

  /** Creates an empty store. */
  constructor(options: MemorySaverOptions = {}) {
    this.serializer = options.serializer ?? jsonSerializer;
    this.#interrupts = new InterruptTable(this.serializer);
  }

  #ser(value: unknown): string {
    return this.serializer.serialize(value);
  }

  #de<T>(text: string): T {
    return this.serializer.deserialize(text) as T;
  }

  #thread(threadId: ThreadId): ThreadState {
    let state = this.#threads.get(threadId);
    if (!state) {
      state = {
        record: null,
        streams: new Map(),
        steering: [],
        once: new Map(),
        runs: new Set(),
        requests: new Set(),
      };
      this.#threads.set(threadId, state);
    }
    return state;
  }

  #stream(threadId: ThreadId, stream: StreamKey): StreamState {
    const thread = this.#thread(threadId);
    let state = thread.streams.get(stream);
    if (!state) {
      state = { head: null, order: [], checkpoints: new Map(), blobs: new Map(), tasks: new Map() };
      thread.streams.set(stream, state);
    }
    return state;
  }

  #peekStream(threadId: ThreadId, stream: StreamKey): StreamState | undefined {
    return this.#threads.get(threadId)?.streams.get(stream);
  }

  // Threads ------------------------------------------------------------------------------------

  /** Creates the thread, or updates tenant, metadata and `updatedAt` of an existing one. */
  putThread(thread: ThreadRecord, fence?: Fence): Promise<void> {
    return settle(() => {
      validateThreadId(thread.threadId);
      this.#fence(fence);
      const state = this.#thread(thread.threadId);
      const createdAt = state.record?.createdAt ?? thread.createdAt;
      const data = this.#ser({ ...thread, createdAt });
      state.record = { tenant: thread.tenant, createdAt, data };
    });
  }

  /** The thread record, if the thread was created with {@link MemorySaver.putThread}. */
  getThread(threadId: ThreadId): Promise<ThreadRecord | undefined> {
    return settle(() => {
      const record = this.#threads.get(threadId)?.record;
      return record ? this.#de<ThreadRecord>(record.data) : undefined;
    });
  }

  /** Threads newest first (by `createdAt`, then id), optionally of one tenant. */
  listThreads(query: { tenant?: string | null; limit?: number; cursor?: string | null }): Promise<{
    items: ThreadRecord[];
    nextCursor: string | null;
  }> {
    return settle(() => {
      const rows: { key: [string, string]; item: string }[] = [];
      for (const [threadId, { record }] of this.#threads) {
        if (!record) continue;
        if (query.tenant !== undefined && record.tenant !== query.tenant) continue;
        rows.push({ key: [record.createdAt, threadId], item: record.data });
      }
      const page = keysetPage(rows, query.cursor, pageLimit(query.limit));
      return {
        items: page.items.map((data) => this.#de<ThreadRecord>(data)),
        nextCursor: page.nextCursor,
      };
    });
  }

  /** Deletes the thread and everything stored under it (also its audit lines and leases). */
  deleteThread(threadId: ThreadId): Promise<void> {
    return settle(() => {
      const state = this.#threads.get(threadId);
      if (state) {
        for (const id of state.runs) this.#runs.delete(id);
        for (const id of state.requests) this.#requests.delete(id);
        this.#threads.delete(threadId);
      }
      this.#interrupts.deleteThread(threadId);
      // The lease row stays (expired): its token must keep growing if the thread is made again.
      const lease = this.#leases.get(threadId);
      if (lease) lease.expiresAt = 0;
      for (let i = this.#audit.length - 1; i >= 0; i -= 1) {
        if (this.#audit[i]?.threadId === threadId) this.#audit.splice(i, 1);
      }
    });
  }

  // Checkpoints --------------------------------------------------------------------------------

  /**
   * Commits one step: checkpoint, blobs, interrupts and runs together.
   *
   * @throws {CheckpointConflictError} when the stream head is not `expectedHeadId`.
   * @throws {NonSerializableError} when a value cannot be encoded; nothing is written.
   */
  commitStep(commit: StepCommit): Promise<void> {
    return settle(() => {
      const { checkpoint } = commit;
      validateThreadId(checkpoint.threadId);
      this.#fence(commit.fence);
      const existing = this.#peekStream(checkpoint.threadId, checkpoint.stream);
      const head = existing?.head ?? null;
      if (head !== commit.expectedHeadId || existing?.checkpoints.has(checkpoint.id)) {
        throw conflictError(checkpoint, commit.expectedHeadId, head);
      }
      const data = this.#ser(checkpoint);
      const blobs = commit.blobs.map((blob) => ({
        channel: blob.channel,
        version: blob.version,
        stored: { kind: blob.kind, prev: blob.prev, value: this.#ser(blob.value) },
      }));
      const interrupts = (commit.interrupts ?? []).map((row) => this.#interrupts.encode(row));
      const runs = (commit.runs ?? []).map((run) => ({ run, data: this.#ser(run) }));

      const stream = existing ?? this.#stream(checkpoint.threadId, checkpoint.stream);
      stream.checkpoints.set(checkpoint.id, data);
      insertSorted(stream.order, checkpoint.id);
      stream.head = checkpoint.id;
      for (const blob of blobs) {
        let versions = stream.blobs.get(blob.channel);
        if (!versions) stream.blobs.set(blob.channel, (versions = new Map<string, StoredBlob>()));
        // Versions are immutable once written: the first write of a version wins.
        if (!versions.has(blob.version)) versions.set(blob.version, blob.stored);
      }
      for (const row of interrupts) this.#interrupts.store(row);
      for (const { run, data: runData } of runs) this.#storeRun(run, runData);
    });
  }

  /** The checkpoint `id` of the stream, or its head when `id` is omitted. */
  getCheckpoint(
    threadId: ThreadId,
    stream: StreamKey,
    id?: CheckpointId,
  ): Promise<CheckpointRecord | undefined> {
    return settle(() => {
      const state = this.#peekStream(threadId, stream);
      const key = id ?? state?.head;
      const data = key === undefined || key === null ? undefined : state?.checkpoints.get(key);
      return data === undefined ? undefined : this.#de<CheckpointRecord>(data);
    });
  }

  /** Checkpoints of a stream, newest first; `before` keeps only ids lower than it. */
  listCheckpoints(
    threadId: ThreadId,
    stream: StreamKey,
    options: { limit?: number; before?: CheckpointId } = {},
  ): Promise<CheckpointRecord[]> {
    return settle(() => {
      const state = this.#peekStream(threadId, stream);
      if (!state) return [];
      const limit = options.limit ?? Number.POSITIVE_INFINITY;
      const end =
        options.before === undefined ? state.order.length : lowerBound(state.order, options.before);
      const out: CheckpointRecord[] = [];
      for (let i = end - 1; i >= 0 && out.length < limit; i -= 1) {
        const data = state.checkpoints.get(state.order[i] as CheckpointId);
        if (data !== undefined) out.push(this.#de<CheckpointRecord>(data));
      }
      return out;
    });
  }

  /**
   * Values of the given channel versions, delta chains rebuilt.
   *
   * @throws {NotFoundError} when a version (or a link of its chain) was never stored.
   */
  getChannelValues(
    threadId: ThreadId,
    stream: StreamKey,
    versions: Record<string, string>,
  ): Promise<Record<string, unknown>> {
    return settle(() => {
      const state = this.#peekStream(threadId, stream);
      const out: Record<string, unknown> = {};
      for (const [channel, version] of Object.entries(versions)) {
        const stored = state?.blobs.get(channel);
        // Walk newest → oldest, then rebuild oldest → newest.
        const chain: { kind: "full" | "delta"; value: unknown }[] = [];
        let current: string | null = version;
        while (current !== null) {
          const blob: StoredBlob | undefined = stored?.get(current);
          if (!blob) throw new NotFoundError("Channel version", `${channel}@${current}`);
          chain.push({ kind: blob.kind, value: this.#de(blob.value) });
          current = blob.kind === "delta" ? blob.prev : null;
        }
        out[channel] = rebuildChannelValue(channel, chain.reverse());
      }
      return out;
    });
  }

  // Task results -------------------------------------------------------------------------------

  /** Records a task outcome with its interrupts; ignored once the task has a `writes` result. */
  putTaskOutcome(outcome: TaskOutcome): Promise<void> {
    return settle(() => {
      this.#fence(outcome.fence);
      const stream = this.#peekStream(outcome.threadId, outcome.stream);
      const prior = stream?.tasks.get(outcome.checkpointId)?.get(outcome.result.taskId);
      if (prior?.kind === "writes") return;
      const data = this.#ser(outcome.result);
      const rows = outcome.interrupts.map((row) => this.#interrupts.encode(row));

      const state = stream ?? this.#stream(outcome.threadId, outcome.stream);
      let tasks = state.tasks.get(outcome.checkpointId);
      if (!tasks) {
        tasks = new Map<TaskId, { kind: TaskResult["kind"]; data: string }>();
        state.tasks.set(outcome.checkpointId, tasks);
      }
      tasks.set(outcome.result.taskId, { kind: outcome.result.kind, data });
      for (const row of rows) this.#interrupts.store(row);
      this.#interrupts.supersede(outcome.superseded);
    });
  }

  /** Results of the tasks of the step that starts at `checkpointId`, in the order first stored. */
  getTaskResults(
    threadId: ThreadId,
    stream: StreamKey,
    checkpointId: CheckpointId,
  ): Promise<TaskResult[]> {
    return settle(() => {
      const tasks = this.#peekStream(threadId, stream)?.tasks.get(checkpointId);
      return tasks ? [...tasks.values()].map((task) => this.#de<TaskResult>(task.data)) : [];
    });
  }

  // Interrupts ---------------------------------------------------------------------------------

  /** One interrupt by id. */
  getInterrupt(id: InterruptId): Promise<StoredInterrupt | undefined> {
    return settle(() => this.#interrupts.get(id));
  }

  /** Interrupts of a thread (all streams), oldest first, optionally by status. */
  getThreadInterrupts(threadId: ThreadId, status?: InterruptStatus): Promise<StoredInterrupt[]> {
    return settle(() => this.#interrupts.ofThread(threadId, status));
  }

  /** Interrupts across threads, newest first (`createdAt`, then id), with a keyset cursor. */
  listInterrupts(query: InterruptQuery): Promise<InterruptPage> {
    return settle(() => this.#interrupts.list(query));
  }

  /** Pending interrupts whose deadline is at or before `now`, oldest deadline first. */
  listExpiredInterrupts(now: string, limit: number): Promise<StoredInterrupt[]> {
    return settle(() => this.#interrupts.expired(now, limit));
  }

  /** Answers and cancels pending interrupts all-or-nothing; see {@link Checkpointer.answerInterrupts}. */
  answerInterrupts(batch: AnswerBatch): Promise<AnswerOutcome> {
    return settle((): AnswerOutcome => {
      const { threadId, requestId = null } = batch;
      this.#fence(batch.fence);
      if (requestId !== null) {
        const request = this.#requests.get(requestId);
        if (request) {
          const result = request.result === undefined ? undefined : this.#de(request.result);
          return { ok: false, reason: "duplicate", result };
        }
      }
      if (batch.expectedHead) {
        const head = this.#peekStream(threadId, batch.expectedHead.stream)?.head ?? null;
        if (head !== batch.expectedHead.checkpointId) {
          return { ok: false, reason: "head_moved", headCheckpointId: head };
        }
      }
      const cancel = batch.cancel ?? [];
      const targets = [...batch.answers.map((answer) => answer.id), ...cancel];
      const notPending = targets.filter((id) => this.#interrupts.peek(id)?.status !== "pending");
      if (notPending.length > 0) {
        return { ok: false, reason: "not_pending", ids: [...new Set(notPending)] };
      }
      // Encode the audit lines first: a value the serializer refuses leaves everything untouched.
      const at = new Date().toISOString();
      const lines = [
        ...batch.answers.map((a) => ({
          id: a.id,
          action: batch.action,
          data: { value: a.value, requestId },
        })),
        ...cancel.map((id) => ({ id, action: "cancel" as const, data: { requestId } })),
      ];
      const audits = lines.map((line) => {
        const record: AuditRecord = {
          id: randomUUID(),
          threadId,
          runId: this.#interrupts.peek(line.id)?.runId ?? null,
          interruptId: line.id,
          action: line.action,
          actor: batch.actor,
          data: line.data,
          createdAt: at,
        };
        return this.#ser(record);
      });
      const runs = (batch.runs ?? []).map((run) => ({ run, data: this.#ser(run) }));

      for (const { id, value } of batch.answers) {
        this.#interrupts.setStatus([id], "answered", { value, actor: batch.actor, at });
      }
      this.#interrupts.setStatus(cancel, "cancelled");
      const thread = this.#thread(threadId);
      for (const ref of batch.wake) {
        const tasks = thread.streams.get(ref.stream)?.tasks.get(ref.checkpointId);
        if (tasks?.get(ref.taskId)?.kind === "paused") tasks.delete(ref.taskId);
      }
      for (const data of audits) this.#audit.push({ seq: ++this.#seq, threadId, data });
      for (const { run, data } of runs) this.#storeRun(run, data);
      if (requestId !== null) {
        this.#requests.set(requestId, { result: undefined });
        thread.requests.add(requestId);
      }
      return { ok: true };
    });
  }

  /** Moves pending interrupts to `cancelled` or `superseded`; others are left as they are. */
  setInterruptStatus(
    ids: InterruptId[],
    status: "cancelled" | "superseded",
    fence?: Fence,
  ): Promise<void> {
    return settle(() => {
      this.#fence(fence);
      this.#interrupts.setStatus(ids, status);
    });
  }

  // Request ids --------------------------------------------------------------------------------

  /** Stores what a request id produced, returned to later duplicates of that request. */
  putRequestResult(requestId: string, result: unknown, fence?: Fence): Promise<void> {
    return settle(() => {
      this.#fence(fence);
      const data = this.#ser(result);
      const request = this.#requests.get(requestId);
      if (request) request.result = data;
      else this.#requests.set(requestId, { result: data });
    });
  }

  /** Whether a request id was applied, with the outcome stored for it. */
  getRequestResult(requestId: string): Promise<{ result: unknown } | undefined> {
    return settle(() => {
      const request = this.#requests.get(requestId);
      if (!request) return undefined;
      return { result: request.result === undefined ? undefined : this.#de(request.result) };
    });
  }

  // Once ---------------------------------------------------------------------------------------

  /** The stored result of `ctx.once(key)` for a task, if it ran. */
  getOnce(
    threadId: ThreadId,
    taskId: TaskId,
    key: string,
  ): Promise<{ value: unknown } | undefined> {
    return settle(() => {
      const data = this.#threads.get(threadId)?.once.get(`${taskId}\u0000${key}`);
      return data === undefined ? undefined : { value: this.#de(data) };
    });
  }

  /** Stores a once-result unless one exists (first write wins); returns the stored one. */
  putOnce(
    threadId: ThreadId,
    taskId: TaskId,
    key: string,
    value: unknown,
    fence?: Fence,
  ): Promise<{ value: unknown }> {
    return settle(() => {
      this.#fence(fence);
      const once = this.#thread(threadId).once;
      const slot = `${taskId}\u0000${key}`;
      let data = once.get(slot);
      if (data === undefined) once.set(slot, (data = this.#ser(value)));
      return { value: this.#de(data) };
    });
  }

  // Runs ---------------------------------------------------------------------------------------

  #storeRun(run: RunRecord, data: string): void {
    const existing = this.#runs.get(run.runId);
    // A finished run never changes status again (SQL: the upsert's WHERE on the old status).
    if (existing && FINAL_RUN_STATUSES.has(existing.status)) return;
    // A replaced run keeps its place in insertion order, as an SQL upsert keeps its row id.
    const seq = existing?.seq ?? ++this.#seq;
    this.#runs.set(run.runId, {
      seq,
      threadId: run.threadId,
      createdAt: run.createdAt,
      updatedAt: run.updatedAt,
      status: run.status,
      root: run.parentRunId === null,
      data,
    });
    this.#thread(run.threadId).runs.add(run.runId);
  }

  /** Inserts or replaces a run record; a `done` or `cancelled` run keeps its status. */
  putRun(run: RunRecord, fence?: Fence): Promise<void> {
    return settle(() => {
      this.#fence(fence);
      this.#storeRun(run, this.#ser(run));
    });
  }

  /** One run by id. */
  getRun(runId: RunId): Promise<RunRecord | undefined> {
    return settle(() => {
      const row = this.#runs.get(runId);
      return row ? this.#de<RunRecord>(row.data) : undefined;
    });
  }

  /** Runs of a thread, oldest first. */
  listRuns(threadId: ThreadId): Promise<RunRecord[]> {
    return settle(() => {
      const rows: RunRow[] = [];
      for (const runId of this.#threads.get(threadId)?.runs ?? []) {
        const row = this.#runs.get(runId);
        if (row) rows.push(row);
      }
      return rows.sort(compareOldestFirst).map((row) => this.#de<RunRecord>(row.data));
    });
  }

  /** Runs in one status across threads, least recently updated first, with a keyset cursor. */
  listRunsByStatus(query: RunQuery): Promise<{ items: RunRecord[]; nextCursor: string | null }> {
    return settle(() => {
      const limit = pageLimit(query.limit);
      const after = decodeCursor(query.cursor);
      const rows = [...this.#runs.entries()]
        .filter(([runId, row]) => {
          if (row.status !== query.status || (query.rootOnly && !row.root)) return false;
          return (
            !after || row.updatedAt > after[0] || (row.updatedAt === after[0] && runId > after[1])
          );
        })
        .sort(([a, x], [b, y]) =>
          x.updatedAt < y.updatedAt
            ? -1
            : x.updatedAt > y.updatedAt
              ? 1
              : a < b
                ? -1
                : a > b
                  ? 1
                  : 0,
        );
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return {
        items: page.map(([, row]) => this.#de<RunRecord>(row.data)),
        nextCursor: rows.length > limit && last ? encodeCursor([last[1].updatedAt, last[0]]) : null,
      };
    });
  }

  // Steering and audit -------------------------------------------------------------------------

  /** Appends a steering record to its thread's log. */
  appendSteering(record: SteeringRecord, fence?: Fence): Promise<void> {
    return settle(() => {
      this.#fence(fence);
      const data = this.#ser(record);
      this.#thread(record.threadId).steering.push(data);
    });
  }

  /** Steering records of a thread, oldest first. */
  listSteering(threadId: ThreadId): Promise<SteeringRecord[]> {
    return settle(() =>
      (this.#threads.get(threadId)?.steering ?? []).map((data) => this.#de<SteeringRecord>(data)),
    );
  }

  /** Appends an audit record. */
  appendAudit(record: AuditRecord, fence?: Fence): Promise<void> {
    return settle(() => {
      this.#fence(fence);
      const data = this.#ser(record);
      this.#audit.push({ seq: ++this.#seq, threadId: record.threadId, data });
    });
  }

  /** Audit records oldest first, by thread or by the tenant of their thread. */
  listAudit(query: AuditQuery): Promise<{ items: AuditRecord[]; nextCursor: string | null }> {
    return settle(() => {
      const limit = pageLimit(query.limit);
      const after = query.cursor ? Number.parseInt(query.cursor, 10) : 0;
      const items: AuditRecord[] = [];
      let lastSeq = 0;
      for (const entry of this.#audit) {
        if (entry.seq <= after) continue;
        if (query.threadId !== undefined && entry.threadId !== query.threadId) continue;
        if (query.tenant !== undefined) {
          const tenant = this.#threads.get(entry.threadId)?.record?.tenant ?? null;
          if (tenant !== query.tenant) continue;
        }
        if (items.length === limit) return { items, nextCursor: String(lastSeq) };
        items.push(this.#de<AuditRecord>(entry.data));
        lastSeq = entry.seq;
      }
      return { items, nextCursor: null };
    });
  }

  // Leases -------------------------------------------------------------------------------------

  /** Takes the lease if it is free, expired or already `owner`'s; returns its fencing token. */
  acquireLease(threadId: ThreadId, owner: string, ttlMs: number): Promise<number | null> {
    return settle(() => {
      validateThreadId(threadId);
      const now = Date.now();
      const lease = this.#leases.get(threadId);
      if (lease && lease.owner !== owner && lease.expiresAt > now) return null;
      const token = (lease?.token ?? 0) + 1;
      this.#leases.set(threadId, { owner, expiresAt: now + ttlMs, token });
      return token;
    });
  }

  /** Extends `owner`'s unexpired lease; false once it expired or changed hands. */
  renewLease(threadId: ThreadId, owner: string, ttlMs: number): Promise<boolean> {
    return settle(() => {
      const now = Date.now();
      const lease = this.#leases.get(threadId);
      if (!lease || lease.owner !== owner || lease.expiresAt <= now) return false;
      lease.expiresAt = now + ttlMs;
      return true;
    });
  }

  /** Releases `owner`'s lease; no-op when someone else holds it. */
  releaseLease(threadId: ThreadId, owner: string): Promise<void> {
    return settle(() => {
      const lease = this.#leases.get(threadId);
      // Expired, not deleted: the token must keep growing for the next holder.
      if (lease?.owner === owner) lease.expiresAt = 0;
    });
  }

  /** The unexpired lease of the thread, if any. */
  getLease(threadId: ThreadId): Promise<LeaseRecord | undefined> {
    return settle(() => {
      const lease = this.#leases.get(threadId);
      if (!lease || lease.expiresAt <= Date.now()) return undefined;
      return {
        owner: lease.owner,
        expiresAt: new Date(lease.expiresAt).toISOString(),
        token: lease.token,
      };
    });
  }

  /** Throws {@link FencedOutError} when `fence` is not the thread's current token. */
  #fence(fence: Fence | undefined): void {
    if (fence) checkFence(fence, this.#leases.get(fence.threadId)?.token ?? null);
  }

  /** Nothing to release; present for the interface. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
