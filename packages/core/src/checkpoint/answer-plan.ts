/**
 * The planning half of `answerInterrupts`, shared by every store: which rows a batch targets,
 * which refusal applies, and what exactly to write. A store reads (and, where it can, locks) the
 * few rows the plan needs inside its transaction, asks {@link planAnswerBatch}, and writes what
 * it is told; so the three backends cannot drift on repeated ids, audit lines or refusal order.
 */
import { randomUUID } from "node:crypto";
import type { CheckpointId, InterruptId, RunId } from "../ids.ts";
import type { AuditRecord, InterruptStatus } from "../types.ts";
import {
  approvalStep,
  type ApprovalProgress,
  type ApprovalStep,
  type StoredApprovalPolicy,
} from "./approvals.ts";
import type { AnswerBatch, AnswerOutcome, TaskRef } from "./types.ts";

/** What a store read, inside the answer's transaction, before planning it. */
export interface AnswerBatchReads {
  /** What was stored for `batch.requestId` if that id was applied before; else `undefined`. */
  request: { result: unknown } | undefined;
  /** The head of `batch.expectedHead.stream` (ignored when the batch expects no head). */
  head: CheckpointId | null;
  /** Status and run of each targeted interrupt that exists (see {@link answerTargets}). */
  interrupts: ReadonlyMap<InterruptId, TargetRead>;
}

/** What a store reads of one targeted interrupt. */
export interface TargetRead {
  status: InterruptStatus;
  runId: RunId;
  /** Its approval policy (absent or null: none). */
  policy?: StoredApprovalPolicy | null | undefined;
  /** The approvals it gathered so far. */
  approvals?: ApprovalProgress | null | undefined;
}

/** One interrupt leaving `pending`: answered with a value, or cancelled. */
export type InterruptResolution =
  | {
      id: InterruptId;
      status: "answered";
      answer: unknown;
      /** Under a policy: the approvals that applied it (written with the answer). */
      approvals?: ApprovalProgress | null;
    }
  | { id: InterruptId; status: "cancelled" };

/** The writes of an accepted batch, all in the answer's transaction. */
export interface AnswerWrites {
  /** One per targeted interrupt, in batch order; `undefined` answers are already `null`. */
  resolutions: InterruptResolution[];
  /** Who answered and when: the `answered_by` / `answered_at` of every answered interrupt. */
  actor: string;
  at: string;
  /** Tasks whose `paused` result to delete (a `writes` result must stay). */
  wake: TaskRef[];
  /** Interrupts that only gain an approval: their new progress (they stay pending). */
  approvals: { id: InterruptId; progress: ApprovalProgress }[];
  /** One audit line per resolved interrupt or recorded approval, in batch order. */
  audit: AuditRecord[];
  /** Runs to move from `interrupted` to `running`, updated at `at` (no other status changes). */
  resumeRuns: RunId[];
  /** The request id to remember, with no result yet (`null`: none). */
  requestId: string | null;
}

/** Either the refusal to return (nothing written) or the writes to make. */
export type AnswerPlan =
  { ok: false; outcome: Exclude<AnswerOutcome, { ok: true }> } | { ok: true; writes: AnswerWrites };

/**
 * The interrupt ids a batch targets, each once, answers first: the rows a store reads (or locks,
 * in this order) before planning.
 */
export function answerTargets(batch: AnswerBatch): InterruptId[] {
  return [...new Set([...batch.answers.map((answer) => answer.id), ...(batch.cancel ?? [])])];
}

/**
 * Plans an answer batch from what the store read. Refusals are decided in a fixed order (a
 * duplicate request id, then a moved head, then interrupts that are not pending), so a store may
 * stop reading at the first refusal that applies.
 *
 * An id given more than once counts once: the first answer to it wins, as if the answers were
 * applied one by one, and an id both answered and cancelled is answered. One audit line is
 * written per interrupt, never for an answer that was not applied.
 */
export function planAnswerBatch(
  batch: AnswerBatch,
  reads: AnswerBatchReads,
  now: Date = new Date(),
): AnswerPlan {
  const requestId = batch.requestId ?? null;
  if (requestId !== null && reads.request !== undefined) {
    return { ok: false, outcome: { ok: false, reason: "duplicate", result: reads.request.result } };
  }
  if (batch.expectedHead && reads.head !== batch.expectedHead.checkpointId) {
    return {
      ok: false,
      outcome: { ok: false, reason: "head_moved", headCheckpointId: reads.head },
    };
  }
  const targets = answerTargets(batch);
  const notPending = targets.filter((id) => reads.interrupts.get(id)?.status !== "pending");
  if (notPending.length > 0) {
    return { ok: false, outcome: { ok: false, reason: "not_pending", ids: notPending } };
  }

  const at = now.toISOString();
  const steps = approvalSteps(batch, reads, at);
  if (!(steps instanceof Map)) return { ok: false, outcome: steps };
  const resolutions: InterruptResolution[] = [];
  const approvals: AnswerWrites["approvals"] = [];
  const audit: AuditRecord[] = [];
  const seen = new Set<InterruptId>();
  const line = (interruptId: InterruptId, action: AuditRecord["action"], data: unknown) =>
    audit.push({
      id: randomUUID(),
      threadId: batch.threadId,
      runId: reads.interrupts.get(interruptId)?.runId ?? null,
      interruptId,
      action,
      actor: batch.actor,
      data,
      createdAt: at,
    });
  for (const { id, value } of batch.answers) {
    if (seen.has(id)) continue;
    seen.add(id);
    const step = steps.get(id);
    if (step?.kind === "record") {
      approvals.push({ id, progress: step.progress });
      line(id, "approval", approvalLine(value, requestId, step.progress));
      continue;
    }
    const applied = step?.kind === "apply" ? step.value : value;
    // `undefined` answers are stored as null, as the interface says.
    resolutions.push({
      id,
      status: "answered",
      answer: applied === undefined ? null : applied,
      ...(step?.kind === "apply" ? { approvals: step.progress } : {}),
    });
    line(id, batch.action, { value: applied, requestId });
  }
  for (const id of batch.cancel ?? []) {
    if (seen.has(id)) continue;
    seen.add(id);
    resolutions.push({ id, status: "cancelled" });
    line(id, "cancel", { requestId });
  }
  return {
    ok: true,
    writes: {
      resolutions,
      actor: batch.actor,
      at,
      wake: batch.wake,
      approvals,
      audit,
      resumeRuns: batch.resumeRuns ?? [],
      requestId,
    },
  };
}

/** The data of a partial approval's audit line: the value, and the count and digest so far. */
function approvalLine(value: unknown, requestId: string | null, progress: ApprovalProgress) {
  const { approvals } = progress;
  return { value, requestId, approvals: approvals.length, digest: approvals.at(-1)?.digest };
}

/**
 * The approval step of each answered interrupt that has a policy, or the refusal of the first
 * one the batch's principal may not answer (only people's answers are governed: a deadline's
 * value and a cancellation are not).
 */
function approvalSteps(
  batch: AnswerBatch,
  reads: AnswerBatchReads,
  at: string,
): Map<InterruptId, ApprovalStep> | Exclude<AnswerOutcome, { ok: true }> {
  const steps = new Map<InterruptId, ApprovalStep>();
  if (batch.action !== "answer") return steps;
  for (const { id, value } of batch.answers) {
    const read = reads.interrupts.get(id);
    if (!read?.policy || steps.has(id)) continue;
    const step = approvalStep(read.policy, read.approvals, batch.principal, value, at);
    if (step.kind === "refuse")
      return {
        ok: false,
        reason: "not_allowed",
        interruptId: id,
        rule: step.rule,
        policy: read.policy,
      };
    steps.set(id, step);
  }
  return steps;
}

/**
 * The outcome of an applied plan: `{ ok: true }`, with the ids that only gained an approval when
 * there are any.
 */
export function appliedOutcome(writes: AnswerWrites): Extract<AnswerOutcome, { ok: true }> {
  return writes.approvals.length > 0
    ? { ok: true, recorded: writes.approvals.map((a) => a.id) }
    : { ok: true };
}
