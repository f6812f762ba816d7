/**
 * The interrupt rows of {@link MemorySaver}: each record kept serialized, with the fields that
 * queries filter on beside it, and indexes by thread, by asking task and of each thread's pending
 * rows in queue order — what the SQL stores' indexes serve, so the calls of one answer cost the
 * same whether 10 or 1,000 questions of the thread are pending.
 */
import type { InterruptId, RunId, TaskId, ThreadId } from "../../ids.ts";
import type { Serializer } from "../../serde.ts";
import type { InterruptStatus } from "../../types.ts";
import {
  compareOldestFirst,
  keysetPage,
  lazyPendingPage,
  lowerBoundBy,
  pageLimit,
} from "../store-kit.ts";
import type { ApprovalProgress } from "../approvals.ts";
import { rootGraphOf } from "../columns.ts";
import type {
  InterruptPage,
  InterruptQuery,
  LadderStepWrite,
  PendingPage,
  PendingSummary,
  StoredInterrupt,
} from "../types.ts";

/** One stored interrupt: its encoded record and the fields queries filter on. */
export interface InterruptRow {
  id: InterruptId;
  /** Insertion order; kept when a row is replaced, as an SQL upsert keeps its row id. */
  seq: number;
  threadId: ThreadId;
  status: InterruptStatus;
  createdAt: string;
  graph: string;
  /** The root graph of the run tree (the app; SQL: the `root_graph` column). */
  rootGraph: string;
  tenant: string | null;
  runId: RunId;
  /** The task that asked (SQL: the column the by-task index serves). */
  taskId: TaskId;
  deadline: string | null;
  /** It has an approval policy (the answer decodes it to check it). */
  governed: boolean;
  data: string;
}

/** An answer laid onto an interrupt as it becomes `answered`. */
export interface AnswerFields {
  value: unknown;
  actor: string;
  at: string;
  /** Under a policy: the approvals that applied it. */
  approvals?: ApprovalProgress | null | undefined;
}

/**
 * Told of each row that entered `pending` or left it, with its status before (`null`: new), in
 * the operation that changed it: what the SQL stores' outbox triggers see.
 */
export type InterruptChange = (row: InterruptRow, before: InterruptStatus | null) => void;

/** The interrupt table. Methods are synchronous; the saver makes them atomic. */
export class InterruptTable {
  readonly #serializer: Serializer;
  readonly #onChange: InterruptChange | undefined;
  readonly #rows = new Map<InterruptId, InterruptRow>();
  readonly #byThread = new Map<ThreadId, Set<InterruptId>>();
  /** Rows of a thread's tasks, by `threadId` and task id (see {@link taskKey}). */
  readonly #byTask = new Map<string, Set<InterruptId>>();
  /** Each thread's pending rows, oldest first (by {@link compareOldestFirst}). */
  readonly #pending = new Map<ThreadId, InterruptRow[]>();
  #seq = 0;

  constructor(serializer: Serializer, onChange?: InterruptChange) {
    this.#serializer = serializer;
    this.#onChange = onChange;
  }

  #decode(row: InterruptRow): StoredInterrupt {
    return this.#serializer.deserialize(row.data) as StoredInterrupt;
  }

  /** Encodes a record without storing it (so a refused value fails before anything changes). */
  encode(record: StoredInterrupt): InterruptRow {
    return {
      id: record.id,
      seq: 0,
      threadId: record.threadId,
      status: record.status,
      createdAt: record.createdAt,
      graph: record.graph,
      rootGraph: rootGraphOf(record),
      tenant: record.tenant,
      runId: record.runId,
      taskId: record.taskId,
      deadline: record.deadline ?? null,
      governed: Boolean(record.policy),
      data: this.#serializer.serialize(record),
    };
  }

  /** Inserts an encoded row, or replaces the row with its id. */
  store(row: InterruptRow): void {
    const existing = this.#rows.get(row.id);
    // An interrupt that left `pending` is never set back, nor its answer erased (SQL: the
    // upsert's WHERE on the old status).
    if (existing && existing.status !== "pending") return;
    row.seq = existing?.seq ?? ++this.#seq;
    if (existing) this.#unqueue(existing);
    // Approvals are the answer's to write: a question raised again keeps those it gathered.
    const kept = existing?.governed ? this.#decode(existing).approvals : undefined;
    if (kept) row.data = this.#serializer.serialize({ ...this.#decode(row), approvals: kept });
    // So are the ladder's steps the timer's: raised again, the question keeps the step it reached.
    const old = existing ? this.#decode(existing) : undefined;
    if (old?.stage) {
      const record = this.#decode(row);
      row.deadline = old.deadline ?? null;
      row.data = this.#serializer.serialize({
        ...record,
        ladder: old.ladder,
        stage: old.stage,
        deadline: old.deadline,
        policy: old.policy,
      });
      row.governed = Boolean(old.policy);
    }
    this.#rows.set(row.id, row);
    let ids = this.#byThread.get(row.threadId);
    if (!ids) this.#byThread.set(row.threadId, (ids = new Set()));
    ids.add(row.id);
    const key = taskKey(row.threadId, row.taskId);
    let ofTask = this.#byTask.get(key);
    if (!ofTask) this.#byTask.set(key, (ofTask = new Set()));
    ofTask.add(row.id);
    if (row.status === "pending") {
      let queue = this.#pending.get(row.threadId);
      if (!queue) this.#pending.set(row.threadId, (queue = []));
      queue.splice(lowerBoundBy(queue, row, compareOldestFirst), 0, row);
    }
    if (existing ? row.status !== "pending" : row.status === "pending")
      this.#onChange?.(row, existing?.status ?? null);
  }

  /** Takes a row out of its thread's pending queue (when it is there). */
  #unqueue(row: InterruptRow): void {
    if (row.status !== "pending") return;
    const queue = this.#pending.get(row.threadId);
    if (!queue) return;
    const at = lowerBoundBy(queue, row, compareOldestFirst);
    if (queue[at] === row) queue.splice(at, 1);
  }

  /** The row of `id`, to read its status and run without decoding it. */
  peek(id: InterruptId): InterruptRow | undefined {
    return this.#rows.get(id);
  }

  /** The decoded record of `id`. */
  get(id: InterruptId): StoredInterrupt | undefined {
    const row = this.#rows.get(id);
    return row ? this.#decode(row) : undefined;
  }

  /** Moves the pending ones of `ids` to `status` (with the answer when answering). */
  setStatus(ids: readonly InterruptId[], status: InterruptStatus, answer?: AnswerFields): void {
    for (const id of ids) {
      const row = this.#rows.get(id);
      if (!row || row.status !== "pending") continue;
      const record = this.#decode(row);
      this.#unqueue(row);
      record.status = status;
      if (answer) {
        // `undefined` answers are stored as null, as the interface says.
        record.answer = answer.value === undefined ? null : answer.value;
        record.answeredBy = answer.actor;
        record.answeredAt = answer.at;
        if (answer.approvals) record.approvals = answer.approvals;
      }
      row.status = status;
      row.data = this.#serializer.serialize(record);
      this.#onChange?.(row, "pending");
    }
  }

  /**
   * Takes a ladder step when the interrupt is pending with its deadline at `write.at`: moves
   * the deadline on, sets the stage and (escalation) the widened policy.
   *
   * @returns the changed row and record, or `undefined` when the step was not due (taken).
   */
  step(write: LadderStepWrite): { row: InterruptRow; record: StoredInterrupt } | undefined {
    const row = this.#rows.get(write.id);
    if (!row || row.status !== "pending" || row.deadline !== write.at) return undefined;
    const record = this.#decode(row);
    record.deadline = write.next;
    record.stage = write.stage;
    if (write.policy !== undefined) record.policy = write.policy;
    row.deadline = write.next;
    row.governed = Boolean(record.policy);
    row.data = this.#serializer.serialize(record);
    return { row, record };
  }

  /** Records the approvals a pending interrupt has gathered (it stays pending). */
  setApprovals(id: InterruptId, progress: ApprovalProgress): void {
    const row = this.#rows.get(id);
    if (!row || row.status !== "pending") return;
    row.data = this.#serializer.serialize({ ...this.#decode(row), approvals: progress });
  }

  /**
   * Marks interrupts superseded when pending or answered: an answer to an old question must
   * never be applied to a new one. Cancelled (and already superseded) ones are left.
   */
  supersede(ids: readonly InterruptId[]): void {
    for (const id of ids) {
      const row = this.#rows.get(id);
      if (!row || (row.status !== "pending" && row.status !== "answered")) continue;
      const record = this.#decode(row);
      this.#unqueue(row);
      const before = row.status;
      record.status = "superseded";
      row.status = "superseded";
      row.data = this.#serializer.serialize(record);
      if (before === "pending") this.#onChange?.(row, before);
    }
  }

  /** How many of a thread's interrupts are pending (no record is decoded). */
  pendingCount(threadId: ThreadId): number {
    return this.#pending.get(threadId)?.length ?? 0;
  }

  /** The decoded records of those of `ids` that exist. */
  byIds(ids: readonly InterruptId[]): StoredInterrupt[] {
    const records: StoredInterrupt[] = [];
    for (const id of new Set(ids)) {
      const row = this.#rows.get(id);
      if (row) records.push(this.#decode(row));
    }
    return records;
  }

  /** The oldest `limit` pending interrupts of a thread (decoded) and the pending count. */
  pendingPage(threadId: ThreadId, limit: number): PendingPage {
    const queue = this.#pending.get(threadId) ?? [];
    // The encoded text, not the rows: an answer replaces a row's text after this read.
    const texts = queue.slice(0, Math.max(0, limit)).map((row) => row.data);
    return lazyPendingPage(
      texts,
      queue.length,
      (text) => this.#serializer.deserialize(text) as StoredInterrupt,
    );
  }

  /** A thread's interrupts asked by `taskIds`, oldest first (only those rows are decoded). */
  ofTasks(threadId: ThreadId, taskIds: readonly TaskId[]): StoredInterrupt[] {
    const rows: InterruptRow[] = [];
    for (const taskId of new Set(taskIds))
      for (const id of this.#byTask.get(taskKey(threadId, taskId)) ?? []) {
        const row = this.#rows.get(id);
        if (row) rows.push(row);
      }
    return rows.sort(compareOldestFirst).map((row) => this.#decode(row));
  }

  /** A thread's interrupts, oldest first, optionally of one status. */
  ofThread(threadId: ThreadId, status?: InterruptStatus): StoredInterrupt[] {
    const rows: InterruptRow[] = [];
    for (const id of this.#byThread.get(threadId) ?? []) {
      const row = this.#rows.get(id);
      if (row && (status === undefined || row.status === status)) rows.push(row);
    }
    return rows.sort(compareOldestFirst).map((row) => this.#decode(row));
  }

  *#threadRows(threadId: ThreadId): Generator<InterruptRow> {
    for (const id of this.#byThread.get(threadId) ?? []) {
      const row = this.#rows.get(id);
      if (row) yield row;
    }
  }

  /** Interrupts across threads, newest first, filtered, one keyset page. */
  list(query: InterruptQuery): InterruptPage {
    const rows: { key: [string, string]; item: InterruptRow }[] = [];
    // A thread's query walks only that thread's rows: a long-lived process holds many threads.
    const candidates =
      query.threadId === undefined ? this.#rows.values() : this.#threadRows(query.threadId);
    for (const row of candidates) {
      if (query.status !== undefined && row.status !== query.status) continue;
      if (query.threadId !== undefined && row.threadId !== query.threadId) continue;
      if (query.graph !== undefined && row.rootGraph !== query.graph) continue;
      if (query.subAgentGraph !== undefined && row.graph !== query.subAgentGraph) continue;
      if (query.tenant !== undefined && row.tenant !== query.tenant) continue;
      if (query.runId !== undefined && row.runId !== query.runId) continue;
      rows.push({ key: [row.createdAt, row.id], item: row });
    }
    const page = keysetPage(rows, query.cursor, pageLimit(query.limit));
    return {
      items: page.items.map((row) => this.#decode(row)),
      nextCursor: page.nextCursor,
      ...(query.count === true ? { total: rows.length } : {}),
    };
  }

  /** Pending interrupts with a deadline at or before `now`, oldest deadline first. */
  expired(now: string, limit: number): StoredInterrupt[] {
    const rows = [...this.#rows.values()].filter(
      (row) => row.status === "pending" && row.deadline !== null && row.deadline <= now,
    );
    rows.sort((a, b) =>
      a.deadline === b.deadline
        ? a.id < b.id
          ? -1
          : 1
        : (a.deadline ?? "") < (b.deadline ?? "")
          ? -1
          : 1,
    );
    return rows.slice(0, limit).map((row) => this.#decode(row));
  }

  /** Pending interrupts grouped by tenant and root graph, from the pending queues only. */
  pendingSummary(): PendingSummary[] {
    const groups = new Map<string, PendingSummary>();
    for (const queue of this.#pending.values())
      for (const row of queue) {
        const key = JSON.stringify([row.tenant, row.rootGraph]);
        const group = groups.get(key);
        if (!group)
          groups.set(key, {
            tenant: row.tenant,
            rootGraph: row.rootGraph,
            count: 1,
            oldestCreatedAt: row.createdAt,
          });
        else {
          group.count += 1;
          if (row.createdAt < group.oldestCreatedAt) group.oldestCreatedAt = row.createdAt;
        }
      }
    return [...groups.values()];
  }

  /** Forgets every interrupt of the thread. */
  deleteThread(threadId: ThreadId): void {
    for (const id of this.#byThread.get(threadId) ?? []) {
      const row = this.#rows.get(id);
      if (row) this.#byTask.delete(taskKey(threadId, row.taskId));
      this.#rows.delete(id);
    }
    this.#byThread.delete(threadId);
    this.#pending.delete(threadId);
  }
}

/** The by-task index key of a thread's task (a NUL cannot occur in a thread id). */
function taskKey(threadId: ThreadId, taskId: TaskId): string {
  return `${threadId}\u0000${taskId}`;
}
