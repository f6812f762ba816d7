/**
 * The part of a SQL store's codec every SQL store shares: records from their rows (a thread, a
 * checkpoint, an interrupt, a run, a task result, a channel's chain) and the encoded bodies that
 * go beside the columns. Each store extends it with the parameters its own statements take.
 */
import type { CheckpointId, RunId, ThreadId } from "../ids.ts";
import type { Serializer } from "../serde.ts";
import type { ApprovalProgress, StoredApprovalPolicy } from "./approvals.ts";
import {
  joinInterrupt,
  joinRun,
  joinTaskResult,
  runBody,
  taskResultBody,
  type EncodedRunRow,
  type EncodedTaskResultRow,
  type InterruptColumns,
} from "./columns.ts";
import { channelValuesFromChains, type ChainLink } from "./store-kit.ts";
import type {
  CheckpointRecord,
  RunRecord,
  StoredInterrupt,
  TaskResult,
  ThreadRecord,
} from "./types.ts";

/** A `threads` row as SQL stores read it. */
export interface EncodedThreadRow {
  thread_id: string;
  tenant: string | null;
  created_at: string;
  updated_at: string;
  /** The encoded metadata. */
  metadata: string;
  /** The graph's name; NULL for a thread created by its first run. */
  graph: string | null;
}

/** A `checkpoints` row as SQL stores read it. */
export interface EncodedCheckpointRow {
  thread_id: string;
  stream: string;
  id: string;
  parent_id: string | null;
  run_id: string;
  step: number;
  source: string;
  created_at: string;
  /** JSON text (SQLite), or the object a driver parsed from a JSON column (Postgres). */
  versions: string | Record<string, string>;
  /** The encoded next tasks. */
  next: string;
  /** The encoded metadata. */
  metadata: string;
}

/** An `interrupts` row as SQL stores read it: its columns and its encoded parts. */
export interface EncodedInterruptRow extends InterruptColumns {
  record: string;
  answer: string | null;
  answered_by: string | null;
  answered_at: string | null;
  /** Absent on a read that leaves the column out. */
  policy?: string | null;
  approvals?: string | null;
  stage?: string | null;
}

/** Encodes records' bodies and decodes rows into records, with one serializer. */
export class RecordCodec {
  readonly #serializer: Serializer;

  /** A codec that encodes with `serializer`. */
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
  thread(row: EncodedThreadRow): ThreadRecord {
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
  checkpoint(row: EncodedCheckpointRow): CheckpointRecord {
    return {
      threadId: row.thread_id as ThreadId,
      stream: row.stream,
      id: row.id as CheckpointId,
      parentId: row.parent_id as CheckpointId | null,
      runId: row.run_id as RunId,
      step: row.step,
      versions:
        typeof row.versions === "string"
          ? (JSON.parse(row.versions) as Record<string, string>)
          : row.versions,
      next: this.decode<CheckpointRecord["next"]>(row.next),
      source: row.source as CheckpointRecord["source"],
      createdAt: row.created_at,
      metadata: this.decode<Record<string, unknown>>(row.metadata),
    };
  }

  /** The interrupt of a row: the encoded rest with the columns laid over it. */
  interrupt(row: EncodedInterruptRow): StoredInterrupt {
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
  run(row: EncodedRunRow): RunRecord {
    return joinRun(this.decode<Partial<RunRecord>>(row.record), row);
  }

  /** The encoded value of a task result (its kind and task id are columns). */
  taskValue(result: TaskResult): string {
    return this.encode(taskResultBody(result));
  }

  /** The task result of a row. */
  taskResult(row: EncodedTaskResultRow): TaskResult {
    return joinTaskResult(this.decode<Partial<TaskResult>>(row.value), row);
  }

  /**
   * Rebuilds each wanted channel from the rows of a chain query (per channel, deepest link
   * first).
   *
   * @throws {NotFoundError} when a version or a link of its chain is missing.
   */
  channelValues(wanted: [string, string][], rows: readonly ChainLink[]): Record<string, unknown> {
    return channelValuesFromChains(wanted, rows, (text) => this.decode(text));
  }
}
