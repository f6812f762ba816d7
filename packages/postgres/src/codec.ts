/**
 * Conversion between the checkpointer's records and the rows and array parameters of the
 * Postgres schema. Values are encoded with the store's serializer; fields that are queried (ids,
 * statuses, timestamps) are plain columns beside the encoded record.
 */
import {
  type AuditRecord,
  type CheckpointId,
  type RunId,
  type Serializer,
  type ThreadId,
} from "@rein/core";
import type {
  ApprovalProgress,
  ChannelBlob,
  CheckpointRecord,
  RunRecord,
  StoredApprovalPolicy,
  StoredInterrupt,
  TaskResult,
  ThreadRecord,
} from "@rein/core/store";
import type {
  EncodedRunRow as RunRow,
  EncodedTaskResultRow as TaskResultRow,
} from "@rein/core/store";
import {
  channelValuesFromChains,
  interruptBody,
  interruptColumns,
  rootGraphOf,
  joinInterrupt,
  joinRun,
  joinTaskResult,
  runBody,
  runColumns,
  taskResultBody,
  type InterruptColumns,
} from "@rein/core/store";

/** A row of `threads`. */
export interface ThreadRow {
  thread_id: string;
  tenant: string | null;
  created_at: string;
  updated_at: string;
  metadata: string;
  /** The graph's name; NULL for a thread created by its first run (migration 11). */
  graph: string | null;
}

/** A row of `checkpoints` (`versions` is jsonb, parsed by the driver). */
export interface CheckpointRow {
  thread_id: string;
  stream: string;
  id: string;
  parent_id: string | null;
  run_id: string;
  step: number;
  source: string;
  created_at: string;
  versions: Record<string, string>;
  next: string;
  metadata: string;
}

/** One link of a delta chain, as read by the recursive query. */
export interface ChainRow {
  channel: string;
  depth: number;
  kind: "full" | "delta";
  prev: string | null;
  value: string;
}

/** The run and task-result rows this store reads, as every SQL store shapes them. */
export type { RunRow, TaskResultRow };

/** The columns an interrupt record is rebuilt from. */
export interface InterruptRow extends InterruptColumns {
  record: string;
  answer: string | null;
  answered_by: string | null;
  answered_at: string | null;
  /** The encoded approval policy and approvals (migration 7; NULL or absent: none). */
  policy?: string | null;
  approvals?: string | null;
  /** The ladder step reached (migration 10; NULL or absent: none). */
  stage?: string | null;
}

/** Thirteen parallel arrays, one per interrupt column, for an `unnest` upsert. */
export type InterruptArrays = (string | null)[][];

/** Encodes records into rows and parameters, and decodes rows into records. */
export class RowCodec {
  readonly #serializer: Serializer;

  constructor(serializer: Serializer) {
    this.#serializer = serializer;
  }

  /** Encodes a value. */
  encode(value: unknown): string {
    return this.#serializer.serialize(value);
  }

  /** Decodes a value. */
  decode<T>(text: string): T {
    return this.#serializer.deserialize(text) as T;
  }

  /** The thread of a row. */
  thread(row: ThreadRow): ThreadRecord {
    return {
      threadId: row.thread_id as ThreadId,
      tenant: row.tenant,
      metadata: this.decode<Record<string, unknown>>(row.metadata),
      ...(row.graph === null ? {} : { graph: row.graph }),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  /** The checkpoint of a row. */
  checkpoint(row: CheckpointRow): CheckpointRecord {
    return {
      threadId: row.thread_id as ThreadId,
      stream: row.stream,
      id: row.id as CheckpointId,
      parentId: row.parent_id as CheckpointId | null,
      runId: row.run_id as RunId,
      step: row.step,
      versions: row.versions,
      next: this.decode<CheckpointRecord["next"]>(row.next),
      source: row.source as CheckpointRecord["source"],
      createdAt: row.created_at,
      metadata: this.decode<Record<string, unknown>>(row.metadata),
    };
  }

  /** Parameters $5..$12 of the commit statement: the checkpoint's own columns. */
  checkpointParams(cp: CheckpointRecord): unknown[] {
    return [
      cp.parentId,
      cp.runId,
      cp.step,
      cp.source,
      cp.createdAt,
      JSON.stringify(cp.versions),
      this.encode(cp.next),
      this.encode(cp.metadata),
    ];
  }

  /** Five parallel arrays (channel, version, kind, prev, value) for the blob insert. */
  blobArrays(blobs: readonly ChannelBlob[]): (string | null)[][] {
    const arrays: (string | null)[][] = [[], [], [], [], []];
    for (const blob of blobs) {
      const prev = blob.kind === "delta" ? blob.prev : null;
      push(arrays, [blob.channel, blob.version, blob.kind, prev, this.encode(blob.value)]);
    }
    return arrays;
  }

  /**
   * Thirteen parallel arrays for the interrupt upsert. Later rows with the same id replace earlier
   * ones, as one `ON CONFLICT DO UPDATE` may not touch a row twice.
   */
  interruptArrays(records: readonly StoredInterrupt[]): InterruptArrays {
    const last = new Map(records.map((record) => [record.id, record]));
    const arrays: InterruptArrays = Array.from({ length: 13 }, () => []);
    for (const record of last.values()) {
      const c = interruptColumns(record);
      push(arrays, [
        c.id,
        c.thread_id,
        c.run_id,
        c.task_id,
        c.graph,
        c.tenant,
        c.status,
        c.created_at,
        c.deadline,
        record.answer === undefined ? null : this.encode(record.answer),
        record.answeredBy ?? null,
        record.answeredAt ?? null,
        this.encode(interruptBody(record)),
      ]);
    }
    return arrays;
  }

  /**
   * The root graph of each row {@link RowCodec.interruptArrays} writes, in the same order: the
   * upsert's last parameter, as the column came after the thirteen.
   */
  interruptRootGraphs(records: readonly StoredInterrupt[]): string[] {
    return [...new Map(records.map((record) => [record.id, record])).values()].map(rootGraphOf);
  }

  /**
   * The encoded approval policy of each row {@link RowCodec.interruptArrays} writes, in the same
   * order (NULL: none): a column added after the root graph's.
   */
  interruptPolicies(records: readonly StoredInterrupt[]): (string | null)[] {
    return [...new Map(records.map((record) => [record.id, record])).values()].map((record) =>
      record.policy ? this.encode(record.policy) : null,
    );
  }

  /**
   * Four parallel arrays (checkpoint, task, kind, value) for the task results of a commit. One
   * statement may not touch a row twice: a task's `writes` result is kept over later ones, as
   * separate outcomes would keep it; otherwise the last result wins.
   */
  taskArrays(results: readonly { checkpointId: string; result: TaskResult }[]): string[][] {
    const kept = new Map<string, { checkpointId: string; result: TaskResult }>();
    for (const entry of results) {
      const key = JSON.stringify([entry.checkpointId, entry.result.taskId]);
      if (kept.get(key)?.result.kind !== "writes") kept.set(key, entry);
    }
    const arrays: string[][] = [[], [], [], []];
    for (const { checkpointId, result } of kept.values()) {
      push(arrays, [checkpointId, result.taskId, result.kind, this.taskValue(result)]);
    }
    return arrays;
  }

  /** The five thread columns of a commit's optional thread row (all null without one). */
  threadParams(thread: ThreadRecord | undefined): (string | null)[] {
    if (!thread) return [null, null, null, null, null];
    const row = [thread.threadId, thread.tenant, thread.createdAt, thread.updatedAt];
    return [...row, this.encode(thread.metadata)];
  }

  /** The `graph` column of a thread row (NULL: a thread created by its first run). */
  threadGraph(thread: ThreadRecord | undefined): string | null {
    return thread?.graph ?? null;
  }

  /** Two parallel arrays (thread, record) of audit lines, in order. */
  auditArrays(records: readonly AuditRecord[]): string[][] {
    return [records.map((r) => r.threadId), records.map((r) => this.encode(r))];
  }

  /** The interrupt of a row: the encoded rest with the columns laid over it. */
  interrupt(row: InterruptRow): StoredInterrupt {
    const answer = row.answer === null ? undefined : this.decode(row.answer);
    return joinInterrupt(this.decode<Partial<StoredInterrupt>>(row.record), {
      ...row,
      answer,
      policy: row.policy == null ? null : this.decode<StoredApprovalPolicy>(row.policy),
      approvals: row.approvals == null ? null : this.decode<ApprovalProgress>(row.approvals),
    });
  }

  /** The encoded part of a run (its queried fields are columns). */
  runValue(run: RunRecord): string {
    return this.encode(runBody(run));
  }

  /** The run of a row. */
  run(row: RunRow): RunRecord {
    return joinRun(this.decode<Partial<RunRecord>>(row.record), row);
  }

  /** The encoded value of a task result (its kind and task id are columns). */
  taskValue(result: TaskResult): string {
    return this.encode(taskResultBody(result));
  }

  /** The task result of a row. */
  taskResult(row: TaskResultRow): TaskResult {
    return joinTaskResult(this.decode<Partial<TaskResult>>(row.value), row);
  }

  /** Four parallel arrays (run id, thread, created at, record) for the run upsert. */
  runArrays(runs: readonly RunRecord[]): string[][] {
    const last = new Map(runs.map((run) => [run.runId, run]));
    const arrays: string[][] = [[], [], [], [], [], [], []];
    for (const run of last.values()) {
      const c = runColumns(run);
      push(arrays, [
        c.run_id,
        c.thread_id,
        c.created_at,
        c.updated_at,
        c.status,
        run.parentRunId === null ? "true" : "false",
        this.runValue(run),
      ]);
    }
    return arrays;
  }

  /**
   * Rebuilds each wanted channel from the rows of the chain query (per channel, deepest link
   * first).
   *
   * @throws {NotFoundError} when a version or a link of its chain is missing.
   */
  channelValues(wanted: [string, string][], rows: ChainRow[]): Record<string, unknown> {
    return channelValuesFromChains(wanted, rows, (text) => this.decode(text));
  }
}

function push<T>(arrays: T[][], values: T[]): void {
  values.forEach((value, i) => arrays[i]?.push(value));
}
