/**
 * Bulk decisions: one answer applied to many pending interrupts, across threads, all or nothing.
 * Each interrupt is checked as if answered alone (pending, visible, allowed by its policy for the
 * principal, the value valid); the answers are then written in one transaction of the store
 * (`answerBatches`) while this call holds every affected thread's lease. The threads' runs are
 * left `running` with their answers stored: the caller continues them (`invoke(null)`), or the
 * recovery sweep does.
 */
import { approvalStep, refusalText } from "../checkpoint/approvals.ts";
import { hasCapability } from "../checkpoint/capabilities.ts";
import type { AnswerBatch, RuntimeStore, StoredInterrupt } from "../checkpoint/types.ts";
import { BulkRefusedError, ReinError, type BulkRefusal } from "../errors.ts";
import { asInterruptId, type ThreadId } from "../ids.ts";
import { checkAnswer } from "../interrupts/answer-schemas.ts";
import type { LeaseSettings } from "../graph/options.ts";
import { defaultLease } from "../thread/lease.ts";
import { openSession, type ThreadSession } from "../thread/session.ts";
import { recordSteering } from "./steering.ts";
import type { ApprovalPrincipal } from "../types.ts";
import { rootRunsResumedBy, tasksToWake } from "./wake.ts";

/** One decision for many interrupts. */
export interface BulkDecision {
  /** The interrupts to decide, by id (each at most once). */
  ids: readonly string[];
  /** The one answer given to each. */
  value: unknown;
  /** Recorded as who answered. */
  actor: string;
  /** Checked against each interrupt's approval policy. */
  principal?: ApprovalPrincipal | null;
  /** Only this tenant's interrupts are visible (others are `not_found`); omitted: all. */
  tenant?: string | null;
  /** Steering text recorded for each answered interrupt. */
  steering?: string;
  /** Lease timing while the threads are held. */
  lease?: Partial<LeaseSettings>;
}

/** What a bulk decision did to one interrupt. */
export interface BulkDecided {
  interruptId: string;
  threadId: string;
  /** `answered`, or `approval_recorded` when its policy needs more approvals. */
  status: "answered" | "approval_recorded";
}

/**
 * Applies `decision.value` to every interrupt of `decision.ids`, all or nothing.
 *
 * @throws BulkRefusedError naming each interrupt that cannot take it (nothing is applied).
 * @throws ThreadBusyError when a thread's lease stays held longer than the lease wait.
 */
export async function decideInterrupts(
  store: RuntimeStore,
  decision: BulkDecision,
): Promise<BulkDecided[]> {
  const ids = [...new Set(decision.ids)].map(asInterruptId);
  const rows = await store.getInterrupts(ids);
  await refuseUnfit(ids, rows, decision);
  const threads = [...new Set(rows.map((row) => row.threadId))].sort();
  const settings = { ...defaultLease, ...decision.lease };
  return withSessions(store, threads, settings, decision.actor, async (sessions) => {
    const batches: AnswerBatch[] = [];
    const decided: StoredInterrupt[] = [];
    for (const session of sessions) {
      const mine = (await session.interruptsById(ids.map(asInterruptId))).filter(
        (row) => row.threadId === session.threadId,
      );
      decided.push(...mine.filter((row) => row.status !== "pending"));
      batches.push(await batchOf(session, mine, decision));
    }
    // Read again under the leases: another decision may have answered some while this one
    // waited for them. Each is named, not only the first thread's.
    if (decided.length > 0) throw new BulkRefusedError(decided.map(decidedMeanwhile));
    const outcome = hasCapability(store, "bulkAnswers")
      ? await store.answerBatches(batches)
      : await oneByOne(store, batches);
    if (!outcome.ok) {
      const batch = batches[outcome.index];
      const refused = outcome.outcome;
      throw new BulkRefusedError(
        (batch?.answers ?? []).map((a) => ({
          interruptId: a.id,
          code: refused.reason === "not_allowed" ? "not_allowed" : "stale_target",
          message:
            refused.reason === "not_allowed"
              ? refusalText(refused.rule, refused.policy)
              : "It was answered or changed while the decision was applied.",
        })),
      );
    }
    const recorded = new Set(outcome.outcomes.flatMap((o) => o.recorded ?? []));
    if (decision.steering !== undefined)
      for (const [i, session] of sessions.entries())
        for (const record of batches[i]?.answers ?? [])
          await steer(session, rows, record.id, decision.steering);
    return rows.map((row) => ({
      interruptId: row.id,
      threadId: row.threadId,
      status: recorded.has(row.id) ? ("approval_recorded" as const) : ("answered" as const),
    }));
  });
}

/** Refuses the whole decision when any interrupt, checked alone, cannot take it. */
async function refuseUnfit(
  ids: readonly string[],
  rows: readonly StoredInterrupt[],
  decision: BulkDecision,
): Promise<void> {
  const byId = new Map(rows.map((row) => [row.id as string, row]));
  const refused: BulkRefusal[] = [];
  const at = new Date().toISOString();
  for (const id of ids) {
    const row = byId.get(id);
    if (!row || (decision.tenant !== undefined && row.tenant !== decision.tenant)) {
      refused.push({ interruptId: id, code: "not_found", message: `No interrupt ${id}.` });
      continue;
    }
    if (row.status !== "pending") {
      const message = `Interrupt ${id} is ${row.status}, not pending.`;
      refused.push({ interruptId: id, code: "stale_target", message });
      continue;
    }
    const step = row.policy
      ? approvalStep(row.policy, row.approvals, decision.principal, decision.value, at)
      : undefined;
    if (step?.kind === "refuse" && row.policy) {
      const message = refusalText(step.rule, row.policy);
      refused.push({ interruptId: id, code: "not_allowed", message });
      continue;
    }
    try {
      await checkAnswer(row, decision.value);
    } catch (error) {
      if (!ReinError.is(error)) throw error;
      refused.push({ interruptId: id, code: "invalid_answer", message: error.message });
    }
  }
  if (refused.length > 0) throw new BulkRefusedError(refused);
}

/** The answer batch of one thread's interrupts, read again under its lease. */
async function batchOf(
  session: ThreadSession,
  mine: readonly StoredInterrupt[],
  decision: BulkDecision,
): Promise<AnswerBatch> {
  const value = decision.value === undefined ? null : decision.value;
  return {
    threadId: session.threadId,
    answers: mine.map((row) => ({ id: row.id, value })),
    wake: await tasksToWake(session, mine),
    actor: decision.actor,
    action: "answer",
    principal: decision.principal ?? null,
    governed: mine.filter((row) => row.policy).map((row) => row.id),
    resumeRuns: rootRunsResumedBy(mine),
    fence: session.lease?.fence,
  };
}

/** The refusal of an interrupt another decision settled while this one waited for its thread. */
function decidedMeanwhile(row: StoredInterrupt): BulkRefusal {
  return {
    interruptId: row.id,
    code: "stale_target",
    message: `Interrupt ${row.id} is ${row.status}, not pending: it was decided while this decision waited.`,
  };
}

/** A store without `answerBatches`: the batches one by one (not atomic across threads). */
async function oneByOne(store: RuntimeStore, batches: readonly AnswerBatch[]) {
  const outcomes = [];
  for (const [index, batch] of batches.entries()) {
    const outcome = await store.answerInterrupts(batch);
    if (!outcome.ok) return { ok: false as const, index, outcome };
    outcomes.push(outcome);
  }
  return { ok: true as const, outcomes };
}

/** Records the decision's steering for one answered interrupt. */
async function steer(
  session: ThreadSession,
  rows: readonly StoredInterrupt[],
  id: string,
  text: string,
): Promise<void> {
  const row = rows.find((r) => r.id === id);
  if (!row) return;
  await recordSteering(
    session,
    { runId: row.runId, namespace: row.namespace, taskId: row.taskId },
    text,
    row.id,
  );
}

/** Runs `fn` holding the leases of `threads`, taken one after another in the given order. */
function withSessions<T>(
  store: RuntimeStore,
  threads: readonly ThreadId[],
  settings: LeaseSettings,
  actor: string,
  fn: (sessions: ThreadSession[]) => Promise<T>,
  held: ThreadSession[] = [],
): Promise<T> {
  const next = threads[held.length];
  if (next === undefined) return fn(held);
  return openSession(store, next, settings, actor, (session) =>
    withSessions(store, threads, settings, actor, fn, [...held, session]),
  );
}
