/**
 * The tables of {@link MemorySaver}: Maps keyed by thread and stream, every value kept serialized,
 * plus the row helpers several roles share (fence check, run and audit rows). Methods are
 * synchronous; the saver runs each call in one `settle`, which makes it atomic.
 */
import type { CheckpointId, RunId, TaskId, ThreadId } from "../../ids.ts";
import type { Serializer } from "../../serde.ts";
import type { AuditRecord } from "../../types.ts";
import { auditEntryHash } from "../audit-chain.ts";
import { checkFence, FINAL_RUN_STATUSES } from "../store-kit.ts";
import type {
  AuditSeal,
  Fence,
  LadderStepWrite,
  RunRecord,
  StreamKey,
  TaskResult,
  ThreadRecord,
} from "../types.ts";
import { InterruptTable, type InterruptRow } from "./interrupts.ts";
import { MemoryWebhooks } from "./webhooks.ts";

/** One stored channel version. */
export interface StoredBlob {
  kind: "full" | "delta";
  prev: string | null;
  value: string;
}

/** One stored side record. */
export interface SideRow {
  data: string;
  /** Epoch ms it expires at; `null`: never. */
  expiresAt: number | null;
  threadId: ThreadId | null;
}

/** One serialized task result and its kind (read without decoding). */
export interface StoredTask {
  kind: TaskResult["kind"];
  data: string;
}

/** One checkpoint stream of a thread. */
export interface StreamState {
  head: CheckpointId | null;
  /** Checkpoint ids in ascending order (commits almost always append). */
  order: CheckpointId[];
  checkpoints: Map<CheckpointId, string>;
  /** channel → version → blob. */
  blobs: Map<string, Map<string, StoredBlob>>;
  /** checkpoint → task → serialized result (a Map keeps insertion order). */
  tasks: Map<CheckpointId, Map<TaskId, StoredTask>>;
}

/** Everything stored under one thread, except rows indexed across threads. */
export interface ThreadState {
  record: { tenant: string | null; createdAt: string; data: string } | null;
  streams: Map<StreamKey, StreamState>;
  steering: string[];
  once: Map<string, string>;
  runs: Set<RunId>;
  requests: Set<string>;
}

/** One stored run with the fields its queries filter and sort on. */
export interface RunRow {
  seq: number;
  threadId: ThreadId;
  createdAt: string;
  updatedAt: string;
  status: RunRecord["status"];
  root: boolean;
  data: string;
}

/** An encoded thread record, ready to store. */
export interface ThreadRow {
  threadId: ThreadId;
  tenant: string | null;
  createdAt: string;
  data: string;
}

/** The in-memory tables and the helpers that write rows of several roles. */
export class MemoryTables {
  readonly serializer: Serializer;
  readonly threads = new Map<ThreadId, ThreadState>();
  readonly interrupts: InterruptTable;
  readonly runs = new Map<RunId, RunRow>();
  /** Audit lines with their chain links (`prevHash` "" for a chain's first line). */
  readonly audit: {
    seq: number;
    threadId: ThreadId;
    data: string;
    n: number;
    prevHash: string;
    hash: string;
  }[] = [];
  /** The newest link of each thread's audit chain. */
  readonly auditHeads = new Map<ThreadId, { n: number; hash: string }>();
  /** The signed head of each thread's audit chain. */
  readonly auditSeals = new Map<ThreadId, AuditSeal>();
  readonly requests = new Map<string, { result: string | undefined }>();
  /** Side records by tenant, kind and key (capability `sideRecords`, `./side-records.ts`). */
  readonly sideRecords = new Map<string, SideRow>();
  readonly leases = new Map<ThreadId, { owner: string; expiresAt: number; token: number }>();
  /** The webhook outbox the writes below report to (the SQL stores' triggers). */
  readonly webhooks = new MemoryWebhooks();
  #seq = 0;

  constructor(serializer: Serializer) {
    this.serializer = serializer;
    this.interrupts = new InterruptTable(serializer, (row) => this.#interruptChanged(row));
  }

  #interruptChanged(row: InterruptRow): void {
    if (!this.webhooks.listening) return;
    this.webhooks.emitInterrupt(row, this.decode(row.data), (value) => this.encode(value));
  }

  /** Takes a ladder step (see `EscalationLadderStore.takeLadderStep`): row, audit line and event. */
  takeLadderStep(write: LadderStepWrite): boolean {
    const audit = this.encode(write.audit);
    const changed = this.interrupts.step(write);
    if (!changed) return false;
    this.storeAudit(write.threadId, audit);
    if (this.webhooks.listening)
      this.webhooks.emitStep(
        changed.row,
        write.stage === "escalated" ? "interrupt.escalated" : "interrupt.reminded",
      );
    return true;
  }

  /** Encodes a value (throws for one the serializer refuses, before anything changes). */
  encode(value: unknown): string {
    return this.serializer.serialize(value);
  }

  /** Decodes a value. */
  decode<T>(text: string): T {
    return this.serializer.deserialize(text) as T;
  }

  /** The next insertion sequence number, shared by runs and audit lines. */
  nextSeq(): number {
    return ++this.#seq;
  }

  /** The thread's state, created empty on first use. */
  thread(threadId: ThreadId): ThreadState {
    let state = this.threads.get(threadId);
    if (!state) {
      state = {
        record: null,
        streams: new Map(),
        steering: [],
        once: new Map(),
        runs: new Set(),
        requests: new Set(),
      };
      this.threads.set(threadId, state);
    }
    return state;
  }

  /** The stream's state, created empty on first use. */
  stream(threadId: ThreadId, stream: StreamKey): StreamState {
    const thread = this.thread(threadId);
    let state = thread.streams.get(stream);
    if (!state) {
      state = { head: null, order: [], checkpoints: new Map(), blobs: new Map(), tasks: new Map() };
      thread.streams.set(stream, state);
    }
    return state;
  }

  /** The stream's state if it exists (reads must not create threads). */
  peekStream(threadId: ThreadId, stream: StreamKey): StreamState | undefined {
    return this.threads.get(threadId)?.streams.get(stream);
  }

  /** Throws {@link FencedOutError} when `fence` is not the thread's current token. */
  fence(fence: Fence | undefined): void {
    if (fence) checkFence(fence, this.leases.get(fence.threadId)?.token ?? null);
  }

  /** Encodes a thread record; its `createdAt` is the stored one when the thread exists. */
  encodeThread(thread: ThreadRecord): ThreadRow {
    const createdAt = this.threads.get(thread.threadId)?.record?.createdAt ?? thread.createdAt;
    const data = this.encode({ ...thread, createdAt });
    return { threadId: thread.threadId, tenant: thread.tenant, createdAt, data };
  }

  /** Stores a thread row made by {@link MemoryTables.encodeThread}. */
  storeThread(row: ThreadRow): void {
    this.thread(row.threadId).record = {
      tenant: row.tenant,
      createdAt: row.createdAt,
      data: row.data,
    };
  }

  /** Inserts or replaces a run row; a final run keeps its status (as the SQL upserts' WHERE). */
  storeRun(run: RunRecord, data: string): void {
    const existing = this.runs.get(run.runId);
    if (existing && FINAL_RUN_STATUSES.has(existing.status)) return;
    const finished =
      run.parentRunId === null &&
      (FINAL_RUN_STATUSES.has(run.status) || run.status === "error") &&
      existing?.status !== run.status;
    if (finished && this.webhooks.listening)
      this.webhooks.emitRunFinished(
        run,
        this.threads.get(run.threadId)?.record?.tenant ?? null,
        data,
      );
    // A replaced run keeps its place in insertion order, as an SQL upsert keeps its row id.
    const seq = existing?.seq ?? this.nextSeq();
    this.runs.set(run.runId, {
      seq,
      threadId: run.threadId,
      createdAt: run.createdAt,
      updatedAt: run.updatedAt,
      status: run.status,
      root: run.parentRunId === null,
      data,
    });
    this.thread(run.threadId).runs.add(run.runId);
  }

  /** Appends an encoded audit line at the end of its thread's hash chain. */
  storeAudit(threadId: ThreadId, data: string): void {
    const head = this.auditHeads.get(threadId) ?? { n: 0, hash: "" };
    const n = head.n + 1;
    const hash = auditEntryHash(threadId, n, head.hash, data);
    this.audit.push({ seq: this.nextSeq(), threadId, data, n, prevHash: head.hash, hash });
    this.auditHeads.set(threadId, { n, hash });
  }

  /** Stores a task result unless the task already has a `writes` result. */
  storeTask(
    stream: StreamState,
    checkpointId: CheckpointId,
    taskId: TaskId,
    task: StoredTask,
  ): void {
    let tasks = stream.tasks.get(checkpointId);
    if (!tasks) stream.tasks.set(checkpointId, (tasks = new Map<TaskId, StoredTask>()));
    if (tasks.get(taskId)?.kind === "writes") return;
    tasks.set(taskId, task);
  }

  /** Encodes an audit record for {@link MemoryTables.storeAudit}. */
  encodeAudit(record: AuditRecord): { threadId: ThreadId; data: string } {
    return { threadId: record.threadId, data: this.encode(record) };
  }
}
