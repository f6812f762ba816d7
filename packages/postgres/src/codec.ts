/**
 * Conversion between the checkpointer's records and the rows and array parameters of the
 * Postgres schema. Values are encoded with the store's serializer; fields that are queried (ids,
 * statuses, timestamps) are plain columns beside the encoded record.
 */
import type { AuditRecord } from "@rein/core";
import type {
  ChannelBlob,
  CheckpointRecord,
  EncodedRunRow as RunRow,
  EncodedTaskResultRow as TaskResultRow,
  EncodedCheckpointRow,
  EncodedInterruptRow as InterruptRow,
  EncodedThreadRow as ThreadRow,
  RunRecord,
  StoredInterrupt,
  TaskResult,
  ThreadRecord,
} from "@rein/core/store";
import {
  interruptBody,
  interruptColumns,
  RecordCodec,
  rootGraphOf,
  runColumns,
} from "@rein/core/store";

/** A row of `checkpoints` (`versions` is jsonb, parsed by the driver). */
export interface CheckpointRow extends EncodedCheckpointRow {
  versions: Record<string, string>;
}

/** One link of a delta chain, as read by the recursive query. */
export interface ChainRow {
  channel: string;
  depth: number;
  kind: "full" | "delta";
  prev: string | null;
  value: string;
}

/** The thread, run, task-result and interrupt rows this store reads, as every SQL store shapes them. */
export type { InterruptRow, RunRow, TaskResultRow, ThreadRow };

/** Thirteen parallel arrays, one per interrupt column, for an `unnest` upsert. */
export type InterruptArrays = (string | null)[][];

/**
 * Encodes records into the parameters and parallel arrays of Postgres's statements; decoding rows
 * into records, and the encoded bodies, are every SQL store's ({@link RecordCodec}).
 */
export class RowCodec extends RecordCodec {
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
}

function push<T>(arrays: T[][], values: T[]): void {
  values.forEach((value, i) => arrays[i]?.push(value));
}
