/**
 * `answerInterrupts` for Postgres: one transaction whose reads lock the targeted rows, so exactly
 * one of several concurrent callers answering the same interrupt succeeds. What to write is
 * planned by the shared planner; only the targeted interrupts and tasks are read or written.
 */
import type { PoolClient } from "pg";
import type { CheckpointId, InterruptId, InterruptStatus, RunId } from "@rein/core";
import {
  answerTargets,
  planAnswerBatch,
  type AnswerBatch,
  type AnswerBatchReads,
  type AnswerOutcome,
} from "@rein/core/store";
import type { RowCodec } from "./codec.ts";
import { Rollback } from "./connection.ts";
import type { Statements } from "./statements.ts";

/** Thrown inside the transaction to roll it back and return a refusal. */
class Refusal extends Rollback<AnswerOutcome> {}

/**
 * Applies `batch` all-or-nothing on `client`, inside the caller's transaction. A refusal
 * (duplicate request, moved head, an interrupt not pending) throws a {@link Rollback} carrying
 * the outcome, so the caller's transaction rolls back and writes nothing.
 */
export async function applyAnswers(
  client: PoolClient,
  sql: Statements,
  codec: RowCodec,
  batch: AnswerBatch,
): Promise<AnswerOutcome> {
  const plan = planAnswerBatch(batch, await readLocked(client, sql, codec, batch));
  if (!plan.ok) throw new Refusal(plan.outcome);
  const { writes } = plan;
  const ids = writes.resolutions.map((r) => r.id);
  const updated = await client.query({
    ...sql.resolveInterrupts,
    values: [
      ids,
      writes.resolutions.map((r) => r.status),
      writes.resolutions.map((r) => (r.status === "answered" ? codec.ser(r.answer) : null)),
      writes.actor,
      writes.at,
    ],
  });
  // Belt and braces: the rows are locked and pending, so every one of them must have moved.
  if (updated.rowCount !== ids.length) throw new Refusal({ ok: false, reason: "not_pending", ids });
  await client.query({
    ...sql.wakeAndAudit,
    values: [
      batch.threadId,
      writes.wake.map((w) => w.stream),
      writes.wake.map((w) => w.checkpointId),
      writes.wake.map((w) => w.taskId),
      writes.audit.map((record) => codec.ser(record)),
    ],
  });
  const runs = codec.runArrays(writes.runs);
  if (runs[0]?.length) await client.query({ ...sql.upsertRuns, values: runs });
  return { ok: true };
}

/**
 * What the planner needs, read under locks: the request id is claimed (a concurrent holder of
 * the same id makes this wait for its outcome), the head is share-locked, the targeted interrupt
 * rows are locked in id order (so overlapping batches cannot deadlock). Stops at the first
 * refusal, which the planner decides first too.
 */
async function readLocked(
  client: PoolClient,
  sql: Statements,
  codec: RowCodec,
  batch: AnswerBatch,
): Promise<AnswerBatchReads> {
  const { threadId } = batch;
  const reads: AnswerBatchReads = { request: undefined, head: null, interrupts: new Map() };
  if (batch.requestId != null) {
    const claimed = await client.query({
      ...sql.claimRequest,
      values: [batch.requestId, threadId],
    });
    if (claimed.rowCount === 0) {
      const row = await client.query<{ result: string | null }>({
        ...sql.getRequest,
        values: [batch.requestId],
      });
      const text = row.rows[0]?.result ?? null;
      return { ...reads, request: { result: text === null ? undefined : codec.de(text) } };
    }
  }
  if (batch.expectedHead) {
    const head = await client.query<{ checkpoint_id: string }>({
      ...sql.lockHead,
      values: [threadId, batch.expectedHead.stream],
    });
    reads.head = (head.rows[0]?.checkpoint_id ?? null) as CheckpointId | null;
    if (reads.head !== batch.expectedHead.checkpointId) return reads;
  }
  const locked = await client.query<{ id: string; status: string; run_id: string }>({
    ...sql.lockInterrupts,
    values: [answerTargets(batch)],
  });
  const interrupts = new Map<InterruptId, { status: InterruptStatus; runId: RunId }>();
  for (const row of locked.rows) {
    interrupts.set(row.id as InterruptId, {
      status: row.status as InterruptStatus,
      runId: row.run_id as RunId,
    });
  }
  return { ...reads, interrupts };
}
