/**
 * `answerInterrupts` for SQLite: reads only the targeted rows (by primary key), plans with the
 * shared planner and writes what it says, inside the caller's write transaction.
 */
import type { CheckpointId, InterruptId, InterruptStatus, RunId } from "@rein/core";
import {
  answerTargets,
  appliedOutcome,
  planAnswerBatch,
  type AnswerBatch,
  type AnswerOutcome,
  type ApprovalProgress,
  type StoredApprovalPolicy,
  type TargetRead,
} from "@rein/core/store";
import { appendAuditLine } from "./audit.ts";
import type { RowCodec } from "./codec.ts";
import type { Statements } from "./statements.ts";

/**
 * Applies `batch` all-or-nothing. Call inside a `BEGIN IMMEDIATE` transaction: the checks (request
 * id, head, pending) are only meaningful while no other writer can interleave. A refusal returns
 * before anything is written.
 */
export function applyAnswers(sql: Statements, codec: RowCodec, batch: AnswerBatch): AnswerOutcome {
  const { threadId } = batch;
  const request = batch.requestId == null ? undefined : sql.getRequest.get(batch.requestId);
  const head = batch.expectedHead
    ? ((sql.getHead.get(threadId, batch.expectedHead.stream)?.checkpoint_id ??
        null) as CheckpointId | null)
    : null;
  const targets = answerTargets(batch);
  const interrupts = new Map<InterruptId, TargetRead>();
  for (const row of sql.interruptStates.all(JSON.stringify(targets))) {
    interrupts.set(row.id as InterruptId, {
      status: row.status as InterruptStatus,
      runId: row.run_id as RunId,
      policy: row.policy === null ? null : codec.decode<StoredApprovalPolicy>(row.policy),
      approvals: row.approvals === null ? null : codec.decode<ApprovalProgress>(row.approvals),
    });
  }
  const plan = planAnswerBatch(batch, {
    request: request && {
      result: request.result === null ? undefined : codec.decode(request.result),
    },
    head,
    interrupts,
  });
  if (!plan.ok) return plan.outcome;
  const { writes } = plan;
  // Encode first: the audit lines carry every answer, so a refused value writes nothing.
  const audit = writes.audit.map((record) => codec.encode(record));
  const cancelled: InterruptId[] = [];
  for (const resolution of writes.resolutions) {
    if (resolution.status === "cancelled") cancelled.push(resolution.id);
    else {
      const answer = codec.encode(resolution.answer);
      const approvals = resolution.approvals ? codec.encode(resolution.approvals) : null;
      sql.answerInterrupt.run(answer, writes.actor, writes.at, approvals, resolution.id);
    }
  }
  for (const { id, progress } of writes.approvals) sql.setApprovals.run(codec.encode(progress), id);
  if (cancelled.length > 0) sql.setStatus.run("cancelled", JSON.stringify(cancelled));
  for (const text of audit) appendAuditLine(sql, threadId, text);
  for (const ref of writes.wake) {
    sql.deletePaused.run(threadId, ref.stream, ref.checkpointId, ref.taskId);
  }
  for (const runId of writes.resumeRuns) sql.resumeRun.run(writes.at, runId);
  if (writes.requestId !== null) sql.insertRequest.run(writes.requestId, threadId);
  return appliedOutcome(writes);
}
