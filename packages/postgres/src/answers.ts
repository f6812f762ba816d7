/**
 * `answerInterrupts` for Postgres in one round trip and one commit when the caller says how it
 * read the targeted rows (else two): a plain read of what the shared planner needs (only the
 * targeted rows), then one statement that re-checks it all under row locks and writes the plan. Of several concurrent callers answering one interrupt exactly
 * one succeeds; a caller that lost a race between its read and its write plans again from what
 * the write statement found.
 */
import type pg from "pg";
import type { CheckpointId, InterruptId, InterruptStatus, RunId } from "@rein/core";
import {
  answerTargets,
  appliedOutcome,
  checkFence,
  planAnswerBatch,
  type AnswerBatch,
  type AnswerBatchReads,
  type AnswerOutcome,
  type AnswerWrites,
  type ApprovalProgress,
  type BatchesOutcome,
  type ContinuationAsk,
  type StoredApprovalPolicy,
  type TargetRead,
} from "@rein/core/store";
import { chainRangeArrays } from "./chains.ts";
import type { ContinuationJson } from "./reads.ts";
import type { RowCodec } from "./codec.ts";
import { checked, guarded } from "./connection.ts";
import type { Statements } from "./statements.ts";

/** What the read and the write statement return about the batch's rows. */
interface Found {
  current_token: string | null;
  seen: boolean;
  seen_result: string | null;
  head: string | null;
  interrupts:
    | [
        id: string,
        status: string,
        runId: string,
        policy?: string | null,
        approvals?: string | null,
      ][]
    | null;
}

/** Races lost in a row before giving up: each needs another writer to win in between. */
const MAX_ATTEMPTS = 5;

/**
 * Applies `batch` all-or-nothing; a refusal writes nothing. When it applied and the batch asked
 * for them, `continuation` holds the continuation's reads the write statement made after it.
 */
export async function answerInterrupts(
  pool: Pick<pg.Pool, "query">,
  sql: Statements,
  codec: RowCodec,
  batch: AnswerBatch,
): Promise<{ outcome: AnswerOutcome; continuation?: ContinuationJson | undefined }> {
  const query = <Row extends pg.QueryResultRow>(
    statement: { name: string; text: string },
    values: unknown[],
  ) => guarded(async () => (await pool.query<Row>(checked(statement, values))).rows[0]);
  const targets = answerTargets(batch);
  // With the caller's reads the plan goes straight to the write, whose checks stand in for the
  // read: when one fails it writes nothing and returns what it found, planned from below.
  const assumed = assumedFound(batch, targets);
  let found: Found =
    assumed ??
    (await query<Found>(sql.answerRead, [
      batch.threadId,
      batch.requestId ?? null,
      batch.expectedHead?.stream ?? null,
      targets,
    ])) ??
    EMPTY;
  for (let attempt = 0; attempt < MAX_ATTEMPTS + (assumed ? 1 : 0); attempt += 1) {
    // A stale writer is told so before any refusal, as if it had been checked first.
    if (batch.fence) checkFence(batch.fence, token(found));
    const reads = readsOf(found, codec);
    const plan = planAnswerBatch(batch, reads);
    if (!plan.ok) return { outcome: plan.outcome };
    const values = [
      ...writeValues(batch, plan.writes, reads, codec),
      ...approvalValues(plan.writes, found, targets, codec),
    ];
    const row = (await query<{ r: Written }>(sql.answerWrite, values))?.r;
    if (row?.applied)
      return {
        outcome: appliedOutcome(plan.writes),
        continuation: row.reads ?? undefined,
      };
    found = row ?? found;
    if (row?.checked && batch.requestId != null) {
      // Everything held but another caller claimed the request id after this statement's
      // snapshot: read what it stored.
      const stored = await query<{ result: string | null }>(sql.getRequest, [batch.requestId]);
      found = { ...found, seen: true, seen_result: stored?.result ?? null };
    }
  }
  return { outcome: { ok: false, reason: "not_pending", ids: targets } };
}

/**
 * Several threads' batches in one transaction on one connection, all-or-nothing: each planned
 * and written as {@link answerInterrupts} does (its row locks held to the commit); the first
 * refusal rolls back what the batches before it wrote.
 */
export async function answerBatches(
  pool: pg.Pool,
  sql: Statements,
  codec: RowCodec,
  batches: readonly AnswerBatch[],
): Promise<BatchesOutcome> {
  const client = await guarded(() => pool.connect());
  let open = false;
  try {
    await guarded(() => client.query("BEGIN"));
    open = true;
    const outcomes: Extract<AnswerOutcome, { ok: true }>[] = [];
    for (const [index, batch] of batches.entries()) {
      // Without the caller's reads: each batch reads its rows in the transaction.
      const { outcome } = await answerInterrupts(client, sql, codec, {
        ...batch,
        thenRead: undefined,
      });
      if (!outcome.ok) {
        await guarded(() => client.query("ROLLBACK"));
        open = false;
        return { ok: false, index, outcome };
      }
      outcomes.push(outcome);
    }
    await guarded(() => client.query("COMMIT"));
    open = false;
    return { ok: true, outcomes };
  } finally {
    if (open) await client.query("ROLLBACK").catch(() => undefined);
    client.release();
  }
}

/** What the write statement returns: what it found, and the continuation's reads if asked. */
interface Written extends Found {
  applied: boolean;
  checked: boolean;
  reads: ContinuationJson | null;
}

const EMPTY: Found = {
  current_token: null,
  seen: false,
  seen_result: null,
  head: null,
  interrupts: null,
};

/**
 * What the read statement would find if nothing changed since the caller read the targeted
 * interrupts: the caller's lease, no earlier request, the expected head, every target pending
 * in the run it was read with. `undefined` when the caller did not name every target's run.
 */
function assumedFound(batch: AnswerBatch, targets: readonly InterruptId[]): Found | undefined {
  const runs = batch.readRuns;
  if (!runs || targets.some((id) => runs[id] === undefined)) return undefined;
  // A row read with an approval policy is read again here: its approvals decide the plan. Rows
  // read without one are assumed to have none; the write's guard refuses the plan otherwise.
  if ((batch.governed?.length ?? 0) > 0) return undefined;
  return {
    current_token: batch.fence ? String(batch.fence.token) : null,
    seen: false,
    seen_result: null,
    head: batch.expectedHead?.checkpointId ?? null,
    interrupts: targets.map((id) => [id, "pending", runs[id] as string, null, null]),
  };
}

function token(found: Found): number | null {
  return found.current_token == null ? null : Number(found.current_token);
}

function readsOf(found: Found, codec: RowCodec): AnswerBatchReads {
  const interrupts = new Map<InterruptId, TargetRead>();
  for (const [id, status, runId, policy, approvals] of found.interrupts ?? []) {
    interrupts.set(id as InterruptId, {
      status: status as InterruptStatus,
      runId: runId as RunId,
      policy: policy == null ? null : codec.decode<StoredApprovalPolicy>(policy),
      approvals: approvals == null ? null : codec.decode<ApprovalProgress>(approvals),
    });
  }
  const result = found.seen_result == null ? undefined : codec.decode(found.seen_result);
  return {
    request: found.seen ? { result } : undefined,
    head: (found.head ?? null) as CheckpointId | null,
    interrupts,
  };
}

/** Parameters of the write statement for a plan made from `reads`. */
function writeValues(
  batch: AnswerBatch,
  writes: AnswerWrites,
  reads: AnswerBatchReads,
  codec: RowCodec,
): unknown[] {
  const { resolutions } = writes;
  return [
    batch.threadId,
    writes.requestId,
    batch.expectedHead?.stream ?? null,
    batch.expectedHead?.checkpointId ?? null,
    resolutions.map((r) => r.id),
    resolutions.map((r) => r.status),
    resolutions.map((r) => (r.status === "answered" ? codec.encode(r.answer) : null)),
    writes.actor,
    writes.at,
    // The audit lines name these runs: the write re-checks that they are still the rows' runs.
    resolutions.map((r) => reads.interrupts.get(r.id)?.runId ?? null),
    writes.wake.map((w) => w.stream),
    writes.wake.map((w) => w.checkpointId),
    writes.wake.map((w) => w.taskId),
    writes.audit.map((record) => codec.encode(record)),
    writes.resumeRuns,
    batch.fence?.token ?? null,
    ...continuationValues(batch.thenRead),
  ];
}

/**
 * Parameters of the approval writes and guards (migration 7): the approvals that applied each
 * answer, the partial approvals, and each target's policy and approvals exactly as read (the
 * encoded text, compared in the write under the rows' locks).
 */
function approvalValues(
  writes: AnswerWrites,
  found: Found,
  targets: readonly InterruptId[],
  codec: RowCodec,
): unknown[] {
  const raw = new Map((found.interrupts ?? []).map(([id, , , p, a]) => [id, [p, a] as const]));
  return [
    writes.resolutions.map((r) =>
      r.status === "answered" && r.approvals ? codec.encode(r.approvals) : null,
    ),
    writes.approvals.map((a) => a.id),
    writes.approvals.map((a) => codec.encode(a.progress)),
    [...targets],
    targets.map((id) => raw.get(id)?.[0] ?? null),
    targets.map((id) => raw.get(id)?.[1] ?? null),
  ];
}

/** Parameters of the continuation's reads after the answer (all NULL: none asked). */
function continuationValues(ask: ContinuationAsk | undefined): unknown[] {
  // Only a root head can be read after the answer (the statement reads the root stream).
  if (!ask || ask.head.stream !== "") return [null, null, null, null, null];
  return [ask.head.id, ...chainRangeArrays(ask.head.versions), ask.taskIds ?? null];
}
