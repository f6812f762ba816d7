/**
 * Conversion between the checkpointer's records and the rows of the SQLite schema. Values are
 * encoded with the store's serializer; fields that are queried (ids, statuses, timestamps) are
 * plain columns beside the encoded record.
 */
import type {
  ChannelBlob,
  CheckpointRecord,
  RunRecord,
  StoredInterrupt,
  ThreadRecord,
} from "@rein/core/store";
import {
  interruptBody,
  interruptColumns,
  RecordCodec,
  rootGraphOf,
  runColumns,
} from "@rein/core/store";
import type {
  BlobValues,
  CheckpointValues,
  InterruptParams,
  RunParams,
  ThreadRow,
} from "./statements.ts";

/**
 * Encodes records into the rows and bind parameters of SQLite's statements; decoding rows into
 * records, and the encoded bodies, are every SQL store's ({@link RecordCodec}).
 */
export class RowCodec extends RecordCodec {
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

  /** The bind parameters of a run upsert. */
  runParams(run: RunRecord): RunParams {
    return {
      ...runColumns(run),
      root: run.parentRunId === null ? 1 : 0,
      record: this.runValue(run),
    };
  }
}
