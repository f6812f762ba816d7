/**
 * The body of `answerInterrupts` for SQLite: checks and writes that must happen in one
 * transaction holding the write lock.
 */
import { randomUUID } from "node:crypto";
import type {
  AnswerBatch,
  AnswerOutcome,
  AuditRecord,
  CheckpointId,
  InterruptId,
  RunId,
} from "@rein/core";
import type { RowCodec } from "./codec.ts";
import type { Statements } from "./statements.ts";

/**
 * Applies `batch` all-or-nothing. Call inside a `BEGIN IMMEDIATE` transaction: the checks below
 * (request id, head, pending) are only meaningful while no other writer can interleave.
 * A refusal returns before anything is written.
 */
export function applyAnswers(sql: Statements, codec: RowCodec, batch: AnswerBatch): AnswerOutcome {
  const { threadId, requestId = null } = batch;
  if (requestId !== null) {
    const request = sql.getRequest.get(requestId);
    if (request) {
      const result = request.result === null ? undefined : codec.de(request.result);
      return { ok: false, reason: "duplicate", result };
    }
  }
  if (batch.expectedHead) {
    const { stream, checkpointId } = batch.expectedHead;
    const head = (sql.getHead.get(threadId, stream)?.checkpoint_id ?? null) as CheckpointId | null;
    if (head !== checkpointId) return { ok: false, reason: "head_moved", headCheckpointId: head };
  }
  const cancel = batch.cancel ?? [];
  const targets = [...batch.answers.map((a) => a.id), ...cancel];
  const states = new Map(sql.interruptStates.all(JSON.stringify(targets)).map((r) => [r.id, r]));
  const notPending = targets.filter((id) => states.get(id)?.status !== "pending");
  if (notPending.length > 0) {
    return { ok: false, reason: "not_pending", ids: [...new Set(notPending)] };
  }

  const at = new Date().toISOString();
  const audit = (interruptId: InterruptId, action: AuditRecord["action"], data: unknown) => {
    const record: AuditRecord = {
      id: randomUUID(),
      threadId,
      runId: (states.get(interruptId)?.run_id ?? null) as RunId | null,
      interruptId,
      action,
      actor: batch.actor,
      data,
      createdAt: at,
    };
    sql.insertAudit.run(threadId, codec.ser(record));
  };
  for (const { id, value } of batch.answers) {
    // `undefined` answers are stored as null, as the interface says.
    sql.answerInterrupt.run(codec.ser(value === undefined ? null : value), batch.actor, at, id);
    audit(id, batch.action, { value, requestId });
  }
  if (cancel.length > 0) sql.setStatus.run("cancelled", JSON.stringify(cancel));
  for (const id of cancel) audit(id, "cancel", { requestId });
  for (const ref of batch.wake) {
    sql.deletePaused.run(threadId, ref.stream, ref.checkpointId, ref.taskId);
  }
  if (requestId !== null) sql.insertRequest.run(requestId, threadId);
  return { ok: true };
}
