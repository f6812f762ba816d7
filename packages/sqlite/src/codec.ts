/**
 * Conversion between the checkpointer's records and the rows of the SQLite schema. Values are
 * encoded with the store's serializer; fields that are queried (ids, statuses, timestamps) are
 * plain columns beside the encoded record.
 */
import { type CheckpointId, type RunId, type Serializer, type ThreadId } from "@rein/core";
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
} from "@rein/core/store";
import type {
  BlobValues,
  ChainRow,
  CheckpointRow,
  CheckpointValues,
  InterruptParams,
  InterruptRow,
  RunParams,
  RunRow,
  TaskResultRow,
  ThreadRow,
} from "./statements.ts";

/** Encodes records into rows and decodes rows into records with one serializer. */
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

  /** The row of a thread. */
  threadRow(thread: ThreadRecord): ThreadRow {
    return {
      thread_id: thread.threadId,
      tenant: thread.tenant,
      created_at: thread.createdAt,
      updated_at: thread.updatedAt,
      metadata: this.encode(thread.metadata),
      graph: thread.graph ?? null,
    };
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

  /** The insert values of a checkpoint (versions as plain JSON: they are strings only). */
  checkpointValues(cp: CheckpointRecord): CheckpointValues {
    return [
      cp.threadId,
      cp.stream,
      cp.id,
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

  /** The insert values of a channel blob of `cp`'s stream. */
  blobValues(cp: CheckpointRecord, blob: ChannelBlob): BlobValues {
    const prev = blob.kind === "delta" ? blob.prev : null;
    return [
      cp.threadId,
      cp.stream,
      blob.channel,
      blob.version,
      blob.kind,
      prev,
      this.encode(blob.value),
    ];
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
      versions: JSON.parse(row.versions) as Record<string, string>,
      next: this.decode<CheckpointRecord["next"]>(row.next),
      source: row.source as CheckpointRecord["source"],
      createdAt: row.created_at,
      metadata: this.decode<Record<string, unknown>>(row.metadata),
    };
  }

  /** The bind parameters of an interrupt upsert: its columns, and the rest encoded. */
  interruptParams(record: StoredInterrupt): InterruptParams {
    return {
      ...interruptColumns(record),
      root_graph: rootGraphOf(record),
      answer: record.answer === undefined ? null : this.encode(record.answer),
      answered_by: record.answeredBy ?? null,
      answered_at: record.answeredAt ?? null,
      record: this.encode(interruptBody(record)),
      policy: record.policy ? this.encode(record.policy) : null,
    };
  }

  /** The interrupt of a row: the encoded rest with the columns laid over it. */
  interrupt(row: InterruptRow): StoredInterrupt {
    const answer = row.answer === null ? undefined : this.decode(row.answer);
    return joinInterrupt(this.decode<Partial<StoredInterrupt>>(row.record), {
      ...row,
      answer,
      policy: row.policy === null ? null : this.decode<StoredApprovalPolicy>(row.policy),
      approvals: row.approvals === null ? null : this.decode<ApprovalProgress>(row.approvals),
    });
  }

  /** The bind parameters of a run upsert. */
  runParams(run: RunRecord): RunParams {
    return {
      ...runColumns(run),
      root: run.parentRunId === null ? 1 : 0,
      record: this.encode(runBody(run)),
    };
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
