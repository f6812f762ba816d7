/**
 * `answerInterrupts` for Postgres: one transaction whose checks hold row locks, so exactly one of
 * several concurrent callers answering the same interrupt succeeds.
 */
import { randomUUID } from "node:crypto";
import type { PoolClient } from "pg";
import type {
  AnswerBatch,
  AnswerOutcome,
  AuditRecord,
  CheckpointId,
  InterruptId,
  RunId,
} from "@rein/core";
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
  // Encode first: a value the serializer refuses must fail before the transaction starts.
  const requestId = batch.requestId ?? null;
  const cancel = batch.cancel ?? [];
  const resolutions = new Map<InterruptId, { status: string; answer: string | null }>();
  for (const { id, value } of batch.answers) {
    if (resolutions.has(id)) continue; // The first answer to an id wins, as in one-by-one order.
    resolutions.set(id, {
      status: "answered",
      answer: codec.ser(value === undefined ? null : value),
    });
  }
  for (const id of cancel) {
    if (!resolutions.has(id)) resolutions.set(id, { status: "cancelled", answer: null });
  }
  const at = new Date().toISOString();
  const auditLines = [
    ...batch.answers.map((a) => ({
      id: a.id,
      action: batch.action,
      data: { value: a.value, requestId },
    })),
    ...cancel.map((id) => ({ id, action: "cancel" as const, data: { requestId } })),
  ];
  auditLines.forEach((line) => codec.ser(line.data));
  const runs = codec.runArrays(batch.runs ?? []);
  const outcome = await checkAndApply();
  if (runs[0]?.length) await client.query({ ...sql.upsertRuns, values: runs });
  return outcome;

  async function checkAndApply(): Promise<AnswerOutcome> {
    const { threadId } = batch;
    if (requestId !== null) {
      // A concurrent holder of the same request id makes this wait for its outcome.
      const claimed = await client.query({ ...sql.claimRequest, values: [requestId, threadId] });
      if (claimed.rowCount === 0) {
        const row = await client.query<{ result: string | null }>({
          ...sql.getRequest,
          values: [requestId],
        });
        const text = row.rows[0]?.result ?? null;
        const result = text === null ? undefined : codec.de(text);
        throw new Refusal({ ok: false, reason: "duplicate", result });
      }
    }
    if (batch.expectedHead) {
      const { stream, checkpointId } = batch.expectedHead;
      // FOR SHARE: the head cannot move until this transaction ends.
      const head = await client.query<{ checkpoint_id: string }>({
        ...sql.lockHead,
        values: [threadId, stream],
      });
      const current = (head.rows[0]?.checkpoint_id ?? null) as CheckpointId | null;
      if (current !== checkpointId) {
        throw new Refusal({ ok: false, reason: "head_moved", headCheckpointId: current });
      }
    }
    const targets = [...batch.answers.map((a) => a.id), ...cancel];
    const locked = await client.query<{ id: string; status: string; run_id: string }>({
      ...sql.lockInterrupts,
      values: [[...resolutions.keys()]],
    });
    const states = new Map(locked.rows.map((row) => [row.id, row]));
    const notPending = targets.filter((id) => states.get(id)?.status !== "pending");
    if (notPending.length > 0) {
      throw new Refusal({ ok: false, reason: "not_pending", ids: [...new Set(notPending)] });
    }
    const ids = [...resolutions.keys()];
    const updated = await client.query({
      ...sql.resolveInterrupts,
      values: [
        ids,
        ids.map((id) => resolutions.get(id)?.status),
        ids.map((id) => resolutions.get(id)?.answer ?? null),
        batch.actor,
        at,
      ],
    });
    // Belt and braces: the rows are locked and pending, so every one of them must have moved.
    if (updated.rowCount !== ids.length) {
      throw new Refusal({ ok: false, reason: "not_pending", ids });
    }
    const records = auditLines.map((line) => {
      const record: AuditRecord = {
        id: randomUUID(),
        threadId,
        runId: (states.get(line.id)?.run_id ?? null) as RunId | null,
        interruptId: line.id,
        action: line.action,
        actor: batch.actor,
        data: line.data,
        createdAt: at,
      };
      return codec.ser(record);
    });
    await client.query({
      ...sql.wakeAndAudit,
      values: [
        threadId,
        batch.wake.map((w) => w.stream),
        batch.wake.map((w) => w.checkpointId),
        batch.wake.map((w) => w.taskId),
        records,
      ],
    });
    return { ok: true };
  }
}
