/**
 * The step commit of the SQLite store: everything a {@link StepCommit} carries is encoded before
 * the write lock is taken (less time holding it, nothing to undo), then written with the head's
 * compare-and-set inside one `BEGIN IMMEDIATE` transaction.
 */
import type { CheckpointId } from "@rein/core";
import { conflictError, type StepCommit } from "@rein/core/store";
import { appendAuditLine } from "./audit.ts";
import type { RowCodec } from "./codec.ts";
import { sqliteCode } from "./driver.ts";
import type { Statements } from "./statements.ts";

/** The bound values of one commit, ready to write. */
export type EncodedCommit = ReturnType<typeof encodeCommit>;

/** Encodes every row of `commit`; throws (writing nothing) for a value the codec refuses. */
export function encodeCommit(codec: RowCodec, commit: StepCommit) {
  const { checkpoint: cp } = commit;
  return {
    row: codec.checkpointValues(cp),
    blobs: commit.blobs.map((blob) => codec.blobValues(cp, blob)),
    interrupts: (commit.interrupts ?? []).map((i) => codec.interruptParams(i)),
    runs: (commit.runs ?? []).map((r) => codec.runParams(r)),
    tasks: (commit.taskResults ?? []).map(
      ({ checkpointId, result }) =>
        [
          cp.threadId,
          cp.stream,
          checkpointId,
          result.taskId,
          result.kind,
          codec.taskValue(result),
        ] as [string, string, string, string, string, string],
    ),
    thread: commit.thread ? codec.threadRow(commit.thread) : undefined,
    audit: (commit.audit ?? []).map((a) => [a.threadId, codec.encode(a)] as [string, string]),
  };
}

/**
 * Writes an encoded commit. Call inside a write transaction, after the fence check.
 *
 * @throws {CheckpointConflictError} when the head moved or the checkpoint id exists.
 */
export function writeCommit(sql: Statements, commit: StepCommit, encoded: EncodedCommit): void {
  const { checkpoint: cp, expectedHeadId } = commit;
  const head = (sql.getHead.get(cp.threadId, cp.stream)?.checkpoint_id ??
    null) as CheckpointId | null;
  if (head !== expectedHeadId) throw conflictError(cp, expectedHeadId, head);
  try {
    sql.insertCheckpoint.run(...encoded.row);
  } catch (error) {
    if (isConstraint(error)) throw conflictError(cp, expectedHeadId, head);
    throw error;
  }
  sql.setHead.run(cp.threadId, cp.stream, cp.id);
  for (const blob of encoded.blobs) sql.insertBlob.run(...blob);
  for (const params of encoded.interrupts) sql.upsertInterrupt.run(params);
  for (const params of encoded.runs) sql.upsertRun.run(params);
  for (const params of encoded.tasks) sql.putTaskResult.run(...params);
  if (encoded.thread) sql.upsertThread.run(encoded.thread);
  for (const [threadId, text] of encoded.audit) appendAuditLine(sql, threadId, text);
}

function isConstraint(error: unknown): boolean {
  return sqliteCode(error) === "SQLITE_CONSTRAINT";
}
