/**
 * `answerInterrupts` of {@link MemorySaver}: reads only the targeted interrupts, the head and the
 * request id, plans with the shared planner and applies its writes; no scan of the thread.
 */
import type { InterruptId } from "../../ids.ts";
import {
  answerTargets,
  appliedOutcome,
  planAnswerBatch,
  type AnswerPlan,
  type AnswerWrites,
  type TargetRead,
} from "../answer-plan.ts";
import type { AnswerBatch, AnswerOutcome, BatchesOutcome, RunRecord } from "../types.ts";
import type { MemoryTables } from "./tables.ts";

/** Answers and cancels pending interrupts all-or-nothing. */
export function answerInterrupts(db: MemoryTables, batch: AnswerBatch): AnswerOutcome {
  const plan = planMemory(db, batch);
  if (!plan.ok) return plan.outcome;
  return applyWrites(db, batch, plan.writes);
}

/** Several threads' batches all-or-nothing: every plan is made before anything is written. */
export function answerBatches(db: MemoryTables, batches: readonly AnswerBatch[]): BatchesOutcome {
  const plans: AnswerWrites[] = [];
  for (const [index, batch] of batches.entries()) {
    const plan = planMemory(db, batch);
    if (!plan.ok) return { ok: false, index, outcome: plan.outcome };
    plans.push(plan.writes);
  }
  const outcomes = plans.map((writes, i) => applyWrites(db, batches[i] as AnswerBatch, writes));
  return { ok: true, outcomes };
}

/** Reads what the planner needs of a batch and plans it. */
function planMemory(db: MemoryTables, batch: AnswerBatch): AnswerPlan {
  const { threadId } = batch;
  db.fence(batch.fence);
  const stored = batch.requestId == null ? undefined : db.requests.get(batch.requestId);
  const interrupts = new Map<InterruptId, TargetRead>();
  for (const id of answerTargets(batch)) {
    const row = db.interrupts.peek(id);
    if (!row) continue;
    // Only a governed row is decoded: an answer without a policy reads what it read before.
    const record = row.governed ? db.interrupts.get(id) : undefined;
    interrupts.set(id, {
      status: row.status,
      runId: row.runId,
      policy: record?.policy ?? null,
      approvals: record?.approvals ?? null,
    });
  }
  return planAnswerBatch(batch, {
    request: stored && {
      result: stored.result === undefined ? undefined : db.decode(stored.result),
    },
    head: batch.expectedHead
      ? (db.peekStream(threadId, batch.expectedHead.stream)?.head ?? null)
      : null,
    interrupts,
  });
}

/** Writes a plan (the batch was planned just before, in the same synchronous turn). */
function applyWrites(
  db: MemoryTables,
  batch: AnswerBatch,
  writes: AnswerWrites,
): Extract<AnswerOutcome, { ok: true }> {
  const { threadId } = batch;
  // Encode first: a value the serializer refuses leaves everything untouched (the audit lines
  // carry every answer value).
  const audit = writes.audit.map((record) => db.encode(record));
  const resumed = writes.resumeRuns.flatMap((runId) => {
    const row = db.runs.get(runId);
    if (row?.status !== "interrupted") return [];
    const run: RunRecord = {
      ...db.decode<RunRecord>(row.data),
      status: "running",
      updatedAt: writes.at,
    };
    return [{ run, data: db.encode(run) }];
  });

  for (const resolution of writes.resolutions) {
    if (resolution.status === "cancelled") db.interrupts.setStatus([resolution.id], "cancelled");
    else {
      const fields = {
        value: resolution.answer,
        actor: writes.actor,
        at: writes.at,
        approvals: resolution.approvals,
      };
      db.interrupts.setStatus([resolution.id], "answered", fields);
    }
  }
  for (const { id, progress } of writes.approvals) db.interrupts.setApprovals(id, progress);
  const thread = db.thread(threadId);
  for (const ref of writes.wake) {
    const tasks = thread.streams.get(ref.stream)?.tasks.get(ref.checkpointId);
    if (tasks?.get(ref.taskId)?.kind === "paused") tasks.delete(ref.taskId);
  }
  for (const data of audit) db.storeAudit(threadId, data);
  for (const { run, data } of resumed) db.storeRun(run, data);
  if (writes.requestId !== null) {
    db.requests.set(writes.requestId, { result: undefined });
    thread.requests.add(writes.requestId);
  }
  return appliedOutcome(writes);
}
