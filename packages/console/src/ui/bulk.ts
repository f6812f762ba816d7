/**
 * Bulk decisions from the queue, as plain functions: which selected questions one decision can
 * answer, which of them cannot be undone, what a sent decision did, and what a refusal names —
 * so the bar only keeps state. The server decides all or nothing (`POST /interrupts/decisions`).
 */
import type { BulkRefusal, DecisionsResult, InterruptListItem, Whoami } from "@rein/client";
import { standingOf } from "./approval.ts";
import { asDecision, decisionAnswer } from "./decision.ts";
import { humanize, payloadSummary } from "./format.ts";

/** The two decisions the queue sends in bulk. */
export type BulkKind = "approve" | "reject";

/** What a bulk decision over the selection would be, before it is sent. */
export interface BulkPlan {
  /** The answer sent to each: the decision convention's accept or ignore. */
  answer: Record<string, unknown>;
  /** Selected questions this decision cannot answer (a plain question, or not in `allow`). */
  unfit: { item: InterruptListItem; why: string }[];
  /** Selected decisions whose effect cannot be undone (approving needs a confirmation). */
  irreversible: InterruptListItem[];
  /** Selected questions whose policy, as far as the page can tell, refuses this reviewer. */
  warnings: { item: InterruptListItem; why: string }[];
}

/** A question named for a list: `Issue refund on thread ticket-1`. */
export function itemLabel(item: InterruptListItem): string {
  const decision = asDecision(item.payload);
  const ask = decision ? humanize(decision.action) : payloadSummary(item.payload, 60);
  return `${ask} on thread ${item.threadId}`;
}

/** The plan of `kind` over `items` for the reviewer `me`. */
export function bulkPlan(items: InterruptListItem[], kind: BulkKind, me: Whoami): BulkPlan {
  const unfit: BulkPlan["unfit"] = [];
  const irreversible: InterruptListItem[] = [];
  const warnings: BulkPlan["warnings"] = [];
  for (const item of items) {
    const decision = asDecision(item.payload);
    if (!decision) {
      unfit.push({ item, why: "a question needs its own answer: open it" });
      continue;
    }
    if (kind === "approve" ? !decision.allow.accept : !decision.allow.ignore) {
      unfit.push({ item, why: `it cannot be ${kind === "approve" ? "accepted" : "ignored"}` });
      continue;
    }
    if (kind === "approve" && decision.irreversible) irreversible.push(item);
    const standing = standingOf(item.approval, me);
    if (standing.kind === "not_listed" || (kind === "approve" && standing.kind === "approved"))
      warnings.push({ item, why: standing.note });
  }
  return {
    answer: decisionAnswer(kind === "approve" ? "accept" : "ignore"),
    unfit,
    irreversible,
    warnings,
  };
}

/** What a sent bulk decision did, in a sentence. */
export function decidedText(kind: BulkKind, result: DecisionsResult): string {
  const verb = kind === "approve" ? "Approved" : "Rejected";
  const partial = result.decided.filter((d) => d.status === "approval_recorded").length;
  const applied = result.count - partial;
  const noun = (n: number) => (n === 1 ? "question" : "questions");
  const head = `${verb} ${result.count} ${noun(result.count)}`;
  if (partial === 0) return `${head}: all applied.`;
  return `${head}: ${applied} applied, ${partial} recorded as an approval waiting for another approver.`;
}

/** Each refused question with why, named as the queue names it (or by id if it left the page). */
export function refusedLines(
  refused: BulkRefusal[],
  items: InterruptListItem[],
): { id: string; label: string; why: string }[] {
  const byId = new Map<string, InterruptListItem>(items.map((i) => [i.id, i]));
  const codeWords: Record<BulkRefusal["code"], string> = {
    not_allowed: "not allowed",
    stale_target: "no longer pending",
    not_found: "not found",
    invalid_answer: "does not take this answer",
  };
  return refused.map((r) => {
    const item = byId.get(r.interruptId);
    return {
      id: r.interruptId,
      label: item ? itemLabel(item) : `Question ${r.interruptId}`,
      why: `${codeWords[r.code]}: ${r.message}`,
    };
  });
}
