/**
 * In-memory {@link Checkpointer} for tests, demos and benchmarks.
 *
 * Values are kept *serialized* (strings from the serializer), never as live objects: a caller that
 * mutates what it passed in or got back cannot change stored state, and a value that a durable
 * store would refuse is refused here too. Every method runs synchronously inside its promise, so
 * each call is atomic with respect to the others, as a transaction would be.
 */
import { randomUUID } from "node:crypto";
import { CheckpointConflictError, InvalidInputError, NotFoundError } from "../errors.ts";
import type { CheckpointId, InterruptId, RunId, TaskId, ThreadId } from "../ids.ts";
import { jsonSerializer, type Serializer } from "../serde.ts";
import type { AuditRecord, InterruptStatus, SteeringRecord } from "../types.ts";
import type {
  AnswerBatch,
  AnswerOutcome,
  AuditQuery,
  CheckpointRecord,
  Checkpointer,
  InterruptPage,
  InterruptQuery,
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
  /** checkpoint → task → serialized result (Map keeps insertion order). */
  tasks: Map<CheckpointId, Map<TaskId, { kind: TaskResult["kind"]; data: string }>>;
}

interface ThreadState {
  record: { tenant: string | null; createdAt: string; data: string } | null;
  streams: Map<StreamKey, StreamState>;
  steering: string[];
  once: Map<string, string>;
  interrupts: Set<InterruptId>;
  runs: Set<RunId>;
  requests: Set<string>;
}

interface InterruptRow {
  seq: number;
  threadId: ThreadId;
  status: InterruptStatus;
  createdAt: string;
  graph: string;
  tenant: string | null;
  runId: RunId;
  deadline: string | null;
  data: string;
}

/**
 * A {@link Checkpointer} that keeps everything in process memory.
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
  readonly #interrupts = new Map<InterruptId, InterruptRow>();
  readonly #runs = new Map<
    RunId,
    { seq: number; threadId: ThreadId; createdAt: string; data: string }
  >();
  readonly #audit: { seq: number; threadId: ThreadId; data: string }[] = [];
  readonly #requests = new Map<string, { threadId: ThreadId; result: string | undefined }>();
  readonly #leases = new Map<ThreadId, { owner: string; expiresAt: number }>();
  #seq = 0;

  /** Creates an empty store. */
  constructor(options: MemorySaverOptions = {}) {
    this.serializer = options.serializer ?? jsonSerializer;
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
        interrupts: new Set(),
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
  putThread(thread: ThreadRecord): Promise<void> {
    return settle(() => {
      const state = this.#thread(thread.threadId);
      const createdAt = state.record?.createdAt ?? thread.createdAt;
      const data = this.#ser({ ...thread, createdAt });
      state.record = { tenant: thread.tenant, createdAt, data };
      return;
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
      const limit = pageLimit(query.limit);
      const after = decodeCursor(query.cursor);
      const rows: { key: [string, string]; data: string }[] = [];
      for (const [threadId, state] of this.#threads) {
        const record = state.record;
        if (!record) continue;
        if (query.tenant !== undefined && record.tenant !== query.tenant) continue;
        const key: [string, string] = [record.createdAt, threadId];
        if (after && compareNewestFirst(key, after) <= 0) continue;
        rows.push({ key, data: record.data });
      }
      rows.sort((a, b) => compareNewestFirst(a.key, b.key));
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return {
        items: page.map((row) => this.#de<ThreadRecord>(row.data)),
        nextCursor: rows.length > limit && last ? encodeCursor(last.key) : null,
      };
    });
  }

  /** Deletes the thread and everything stored under it (also its audit lines and leases). */
  deleteThread(threadId: ThreadId): Promise<void> {
    return settle(() => {
      const state = this.#threads.get(threadId);
      if (state) {
        for (const id of state.interrupts) this.#interrupts.delete(id);
        for (const id of state.runs) this.#runs.delete(id);
        for (const id of state.requests) this.#requests.delete(id);
        this.#threads.delete(threadId);
      }
      this.#leases.delete(threadId);
      for (let i = this.#audit.length - 1; i >= 0; i -= 1) {
        if (this.#audit[i]?.threadId === threadId) this.#audit.splice(i, 1);
      }
      return;
    });
  }

  // Checkpoints --------------------------------------------------------------------------------

  /**
   * Commits one step: checkpoint, blobs, interrupts and runs together.
   *
   * @throws {CheckpointConflictError} when the stream head is not `expectedHeadId`.
   */
  commitStep(commit: StepCommit): Promise<void> {
    return settle(() => {
      const { checkpoint } = commit;
      const existing = this.#peekStream(checkpoint.threadId, checkpoint.stream);
      const head = existing?.head ?? null;
      if (head !== commit.expectedHeadId || existing?.checkpoints.has(checkpoint.id)) {
        throw conflict(checkpoint, commit.expectedHeadId, head);
      }
      // Encode everything before touching state: a value the serializer refuses writes nothing.
      const data = this.#ser(checkpoint);
      const blobs = commit.blobs.map((blob) => ({
        channel: blob.channel,
        version: blob.version,
        stored: { kind: blob.kind, prev: blob.prev, value: this.#ser(blob.value) },
      }));
      const interrupts = (commit.interrupts ?? []).map((row) => this.#interruptRow(row));
      const runs = (commit.runs ?? []).map((run) => ({ run, data: this.#ser(run) }));

      const stream = existing ?? this.#stream(checkpoint.threadId, checkpoint.stream);
      stream.checkpoints.set(checkpoint.id, data);
      insertSorted(stream.order, checkpoint.id);
      stream.head = checkpoint.id;
      for (const blob of blobs) {
        let versions = stream.blobs.get(blob.channel);
        if (!versions) {
          versions = new Map();
          stream.blobs.set(blob.channel, versions);
        }
        // Versions are immutable once written: the first write of a version wins.
        if (!versions.has(blob.version)) versions.set(blob.version, blob.stored);
      }
      for (const row of interrupts) this.#storeInterrupt(row);
      for (const { run, data: runData } of runs) this.#storeRun(run, runData);
      return;
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
      const { before } = options;
      let end = state.order.length;
      if (before !== undefined) end = lowerBound(state.order, before);
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
      const stream = this.#peekStream(outcome.threadId, outcome.stream);
      const prior = stream?.tasks.get(outcome.checkpointId)?.get(outcome.result.taskId);
      if (prior?.kind === "writes") return;
      const data = this.#ser(outcome.result);
      const rows = outcome.interrupts.map((row) => this.#interruptRow(row));

      const state = stream ?? this.#stream(outcome.threadId, outcome.stream);
      let tasks = state.tasks.get(outcome.checkpointId);
      if (!tasks) {
        tasks = new Map();
        state.tasks.set(outcome.checkpointId, tasks);
      }
      tasks.set(outcome.result.taskId, { kind: outcome.result.kind, data });
      for (const row of rows) this.#storeInterrupt(row);
      this.#supersede(outcome.superseded);
      return;
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
      if (!tasks) return [];
      return [...tasks.values()].map((task) => this.#de<TaskResult>(task.data));
    });
  }

  // Interrupts ---------------------------------------------------------------------------------

  #interruptRow(record: StoredInterrupt): InterruptRow {
    return {
      seq: 0,
      threadId: record.threadId,
      status: record.status,
      createdAt: record.createdAt,
      graph: record.graph,
      tenant: record.tenant,
      runId: record.runId,
      deadline: record.deadline ?? null,
      data: this.#ser(record),
    };
  }

  #storeInterrupt(row: InterruptRow): void {
    const id = this.#de<StoredInterrupt>(row.data).id;
    // A replaced row keeps its place in insertion order, as an SQL upsert keeps its row id.
    row.seq = this.#interrupts.get(id)?.seq ?? ++this.#seq;
    this.#interrupts.set(id, row);
    this.#thread(row.threadId).interrupts.add(id);
  }

  /** Marks pending or answered interrupts superseded (cancelled ones stay cancelled). */
  #supersede(ids: readonly InterruptId[]): void {
    for (const id of ids) {
      const row = this.#interrupts.get(id);
      if (!row || (row.status !== "pending" && row.status !== "answered")) continue;
      const record = this.#de<StoredInterrupt>(row.data);
      record.status = "superseded";
      row.status = "superseded";
      row.data = this.#ser(record);
    }
  }

  #setStatus(ids: readonly InterruptId[], status: InterruptStatus, answer?: AnswerFields): void {
    for (const id of ids) {
      const row = this.#interrupts.get(id);
      if (!row || row.status !== "pending") continue;
      const record = this.#de<StoredInterrupt>(row.data);
      record.status = status;
      if (answer) {
        record.answer = answer.value === undefined ? null : answer.value;
        record.answeredBy = answer.actor;
        record.answeredAt = answer.at;
      }
      row.status = status;
      row.data = this.#ser(record);
    }
  }

  /** One interrupt by id. */
  getInterrupt(id: InterruptId): Promise<StoredInterrupt | undefined> {
    return settle(() => {
      const row = this.#interrupts.get(id);
      return row ? this.#de<StoredInterrupt>(row.data) : undefined;
    });
  }

  /** Interrupts of a thread (all streams), oldest first, optionally by status. */
  getThreadInterrupts(threadId: ThreadId, status?: InterruptStatus): Promise<StoredInterrupt[]> {
    return settle(() => {
      const ids = this.#threads.get(threadId)?.interrupts ?? new Set<InterruptId>();
      const rows: InterruptRow[] = [];
      for (const id of ids) {
        const row = this.#interrupts.get(id);
        if (row && (status === undefined || row.status === status)) rows.push(row);
      }
      rows.sort((a, b) =>
        a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.seq - b.seq,
      );
      return rows.map((row) => this.#de<StoredInterrupt>(row.data));
    });
  }

  /** Interrupts across threads, newest first (`createdAt`, then id), with a keyset cursor. */
  listInterrupts(query: InterruptQuery): Promise<InterruptPage> {
    return settle(() => {
      const limit = pageLimit(query.limit);
      const after = decodeCursor(query.cursor);
      const rows: { key: [string, string]; row: InterruptRow }[] = [];
      for (const [id, row] of this.#interrupts) {
        if (query.status !== undefined && row.status !== query.status) continue;
        if (query.threadId !== undefined && row.threadId !== query.threadId) continue;
        if (query.graph !== undefined && row.graph !== query.graph) continue;
        if (query.tenant !== undefined && row.tenant !== query.tenant) continue;
        if (query.runId !== undefined && row.runId !== query.runId) continue;
        const key: [string, string] = [row.createdAt, id];
        if (after && compareNewestFirst(key, after) <= 0) continue;
        rows.push({ key, row });
      }
      rows.sort((a, b) => compareNewestFirst(a.key, b.key));
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return {
        items: page.map(({ row }) => this.#de<StoredInterrupt>(row.data)),
        nextCursor: rows.length > limit && last ? encodeCursor(last.key) : null,
      };
    });
  }

  /** Pending interrupts whose deadline is at or before `now`, oldest deadline first. */
  listExpiredInterrupts(now: string, limit: number): Promise<StoredInterrupt[]> {
    return settle(() => {
      const rows: { deadline: string; id: string; row: InterruptRow }[] = [];
      for (const [id, row] of this.#interrupts) {
        if (row.status === "pending" && row.deadline !== null && row.deadline <= now) {
          rows.push({ deadline: row.deadline, id, row });
        }
      }
      rows.sort((a, b) =>
        a.deadline < b.deadline ? -1 : a.deadline > b.deadline ? 1 : a.id < b.id ? -1 : 1,
      );
      return rows.slice(0, limit).map(({ row }) => this.#de<StoredInterrupt>(row.data));
    });
  }

  /** Answers and cancels pending interrupts all-or-nothing; see {@link Checkpointer.answerInterrupts}. */
  answerInterrupts(batch: AnswerBatch): Promise<AnswerOutcome> {
    return settle(() => {
      const { threadId } = batch;
      if (batch.requestId != null) {
        const request = this.#requests.get(batch.requestId);
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
      const notPending = targets.filter((id) => this.#interrupts.get(id)?.status !== "pending");
      if (notPending.length > 0) {
        return { ok: false, reason: "not_pending", ids: [...new Set(notPending)] };
      }
      // Encode answers first so a value the serializer refuses leaves everything untouched.
      const at = new Date().toISOString();
      const audits = [
        ...batch.answers.map((answer) => ({
          id: answer.id,
          action: batch.action,
          data: { value: answer.value, requestId: batch.requestId ?? null },
        })),
        ...cancel.map((id) => ({
          id,
          action: "cancel" as const,
          data: { requestId: batch.requestId ?? null },
        })),
      ].map((entry) => {
        const runId = this.#interrupts.get(entry.id)?.runId ?? null;
        const record: AuditRecord = {
          id: randomUUID(),
          threadId,
          runId,
          interruptId: entry.id,
          action: entry.action,
          actor: batch.actor,
          data: entry.data,
          createdAt: at,
        };
        return this.#ser(record);
      });

      for (const answer of batch.answers) {
        this.#setStatus([answer.id], "answered", { value: answer.value, actor: batch.actor, at });
      }
      this.#setStatus(cancel, "cancelled");
      const thread = this.#thread(threadId);
      for (const ref of batch.wake) {
        const tasks = thread.streams.get(ref.stream)?.tasks.get(ref.checkpointId);
        if (tasks?.get(ref.taskId)?.kind === "paused") tasks.delete(ref.taskId);
      }
      for (const data of audits) this.#audit.push({ seq: ++this.#seq, threadId, data });
      if (batch.requestId != null) {
        this.#requests.set(batch.requestId, { threadId, result: undefined });
        thread.requests.add(batch.requestId);
      }
      return { ok: true };
    });
  }

  /** Moves pending interrupts to `cancelled` or `superseded`; others are left as they are. */
  setInterruptStatus(ids: InterruptId[], status: "cancelled" | "superseded"): Promise<void> {
    return settle(() => {
      this.#setStatus(ids, status);
      return;
    });
  }

  // Request ids --------------------------------------------------------------------------------

  /** Stores what a request id produced, returned to later duplicates of that request. */
  putRequestResult(requestId: string, result: unknown): Promise<void> {
    return settle(() => {
      const data = this.#ser(result);
      const request = this.#requests.get(requestId);
      if (request) request.result = data;
      else this.#requests.set(requestId, { threadId: "" as ThreadId, result: data });
      return;
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
      const data = this.#threads.get(threadId)?.once.get(onceKey(taskId, key));
      return data === undefined ? undefined : { value: this.#de(data) };
    });
  }

  /** Stores a once-result unless one exists; returns the stored one. */
  putOnce(
    threadId: ThreadId,
    taskId: TaskId,
    key: string,
    value: unknown,
  ): Promise<{ value: unknown }> {
    return settle(() => {
      const once = this.#thread(threadId).once;
      const slot = onceKey(taskId, key);
      let data = once.get(slot);
      if (data === undefined) {
        data = this.#ser(value);
        once.set(slot, data);
      }
      return { value: this.#de(data) };
    });
  }

  // Runs ---------------------------------------------------------------------------------------

  #storeRun(run: RunRecord, data: string): void {
    const seq = this.#runs.get(run.runId)?.seq ?? ++this.#seq;
    this.#runs.set(run.runId, { seq, threadId: run.threadId, createdAt: run.createdAt, data });
    this.#thread(run.threadId).runs.add(run.runId);
  }

  /** Inserts or replaces a run record. */
  putRun(run: RunRecord): Promise<void> {
    return settle(() => {
      this.#storeRun(run, this.#ser(run));
      return;
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
      const rows = [];
      for (const runId of this.#threads.get(threadId)?.runs ?? []) {
        const row = this.#runs.get(runId);
        if (row) rows.push(row);
      }
      rows.sort((a, b) =>
        a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.seq - b.seq,
      );
      return rows.map((row) => this.#de<RunRecord>(row.data));
    });
  }

  // Steering and audit -------------------------------------------------------------------------

  /** Appends a steering record to its thread's log. */
  appendSteering(record: SteeringRecord): Promise<void> {
    return settle(() => {
      const data = this.#ser(record);
      this.#thread(record.threadId).steering.push(data);
      return;
    });
  }

  /** Steering records of a thread, oldest first. */
  listSteering(threadId: ThreadId): Promise<SteeringRecord[]> {
    return settle(() => {
      const log = this.#threads.get(threadId)?.steering ?? [];
      return log.map((data) => this.#de<SteeringRecord>(data));
    });
  }

  /** Appends an audit record. */
  appendAudit(record: AuditRecord): Promise<void> {
    return settle(() => {
      const data = this.#ser(record);
      this.#audit.push({ seq: ++this.#seq, threadId: record.threadId, data });
      return;
    });
  }

  /** Audit records oldest first, by thread or by the tenant of their thread. */
  listAudit(query: AuditQuery): Promise<{ items: AuditRecord[]; nextCursor: string | null }> {
    return settle(() => {
      const limit = pageLimit(query.limit);
      const after = query.cursor ? Number.parseInt(query.cursor, 10) : 0;
      const items: AuditRecord[] = [];
      let lastSeq = 0;
      let more = false;
      for (const entry of this.#audit) {
        if (entry.seq <= after) continue;
        if (query.threadId !== undefined && entry.threadId !== query.threadId) continue;
        if (query.tenant !== undefined) {
          const tenant = this.#threads.get(entry.threadId)?.record?.tenant ?? null;
          if (tenant !== query.tenant) continue;
        }
        if (items.length === limit) {
          more = true;
          break;
        }
        items.push(this.#de<AuditRecord>(entry.data));
        lastSeq = entry.seq;
      }
      return { items, nextCursor: more ? String(lastSeq) : null };
    });
  }

  // Leases -------------------------------------------------------------------------------------

  /** Takes the lease if it is free, expired or already `owner`'s. */
  acquireLease(threadId: ThreadId, owner: string, ttlMs: number): Promise<boolean> {
    return settle(() => {
      const now = Date.now();
      const lease = this.#leases.get(threadId);
      if (lease && lease.owner !== owner && lease.expiresAt > now) return false;
      this.#leases.set(threadId, { owner, expiresAt: now + ttlMs });
      return true;
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
      if (this.#leases.get(threadId)?.owner === owner) this.#leases.delete(threadId);
      return;
    });
  }

  /** The unexpired lease of the thread, if any. */
  getLease(threadId: ThreadId): Promise<{ owner: string; expiresAt: string } | undefined> {
    return settle(() => {
      const lease = this.#leases.get(threadId);
      if (!lease || lease.expiresAt <= Date.now()) return undefined;
      return {
        owner: lease.owner,
        expiresAt: new Date(lease.expiresAt).toISOString(),
      };
    });
  }

  /** Nothing to release; present for the interface. */
  close(): Promise<void> {
    return settle(() => {
      return;
    });
  }
}

interface AnswerFields {
  value: unknown;
  actor: string;
  at: string;
}

function onceKey(taskId: TaskId, key: string): string {
  return `${taskId}\u0000${key}`;
}

function conflict(
  checkpoint: CheckpointRecord,
  expected: CheckpointId | null,
  head: CheckpointId | null,
): CheckpointConflictError {
  return new CheckpointConflictError(
    `Commit of checkpoint ${checkpoint.id} on thread ${checkpoint.threadId} expected head ${expected ?? "(empty)"} but the head is ${head ?? "(empty)"}.`,
    {
      threadId: checkpoint.threadId,
      stream: checkpoint.stream,
      checkpointId: checkpoint.id,
      expectedHeadId: expected,
      headCheckpointId: head,
    },
  );
}

/** Index of the first element `>= value` in an ascending array. */
function lowerBound(sorted: readonly string[], value: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as string) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function insertSorted<T extends string>(sorted: T[], value: T): void {
  const last = sorted[sorted.length - 1];
  if (last === undefined || last < value) sorted.push(value);
  else sorted.splice(lowerBound(sorted, value), 0, value);
}

/** Default and maximum page sizes of the list methods. */
const DEFAULT_PAGE = 50;
const MAX_PAGE = 1000;

function pageLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return DEFAULT_PAGE;
  return Math.max(1, Math.min(MAX_PAGE, Math.floor(limit)));
}

/** Newest-first order of `[createdAt, id]` keys: negative when `a` comes first. */
function compareNewestFirst(a: readonly [string, string], b: readonly [string, string]): number {
  if (a[0] !== b[0]) return a[0] > b[0] ? -1 : 1;
  if (a[1] !== b[1]) return a[1] > b[1] ? -1 : 1;
  return 0;
}

/** Keyset cursors are opaque to callers: base64url of the JSON key of the last item. */
function encodeCursor(key: readonly [string, string]): string {
  return Buffer.from(JSON.stringify(key)).toString("base64url");
}

function decodeCursor(cursor: string | null | undefined): [string, string] | null {
  if (!cursor) return null;
  try {
    const key: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString());
    if (Array.isArray(key) && key.length === 2 && key.every((k) => typeof k === "string")) {
      return key as [string, string];
    }
  } catch {
    // Fall through: a cursor we did not make.
  }
  throw new InvalidInputError(`Invalid cursor ${JSON.stringify(cursor)}.`, { cursor });
}

/**
 * Rebuilds a channel value from its chain, oldest link first: a `full` value followed by the
 * arrays appended by each `delta`.
 */
function rebuildChannelValue(
  channel: string,
  chain: readonly { kind: "full" | "delta"; value: unknown }[],
): unknown {
  const [base, ...deltas] = chain;
  if (!base || deltas.length === 0) return base?.value;
  const out: unknown[] = Array.isArray(base.value) ? [...(base.value as unknown[])] : [];
  if (!Array.isArray(base.value) && base.value != null) {
    throw new InvalidInputError(`Channel ${channel} has deltas on a value that is not an array.`, {
      channel,
    });
  }
  for (const delta of deltas) {
    if (Array.isArray(delta.value)) out.push(...(delta.value as unknown[]));
    else out.push(delta.value);
  }
  return out;
}

/**
 * Runs a synchronous store operation as a promise: a throw (a conflict, a value the serializer
 * refuses) becomes a rejection, as it would be from a database driver.
 */
function settle<T>(operation: () => T): Promise<T> {
  return new Promise<T>((resolve) => resolve(operation()));
}
