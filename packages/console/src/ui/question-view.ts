/**
 * What the decision screen says of a question, worked out from the data alone: its title, what
 * an approval policy holds back, whether it left the queue while the screen was open, and the
 * words of a sent answer.
 */
import type { InterruptListItem } from "@rein/client";
import type { Standing } from "./approval.ts";
import type { DecisionKind, DecisionPayload } from "./decision.ts";
import { humanize, keyArgs } from "./format.ts";

/**
 * What an approval policy holds back, as the page can tell before a click: `approve` (this
 * reviewer's approval is counted: Accept and Respond wait for another approver; Edit, which
 * restarts the count, and Ignore stay), `all` (the policy does not list this reviewer).
 */
export type Hold = "none" | "approve" | "all";

/** What the reviewer's standing holds back. */
export function holdOf(standing: Standing): Hold {
  return standing.kind === "not_listed" ? "all" : standing.kind === "approved" ? "approve" : "none";
}

/** The screen's title: the action of a decision, `Question`, or that it is not pending. */
export function questionTitle(
  item: InterruptListItem | null,
  decision: DecisionPayload | null,
): string {
  return item ? (decision ? humanize(decision.action) : "Question") : "No longer pending";
}

/**
 * True when the live feed says the question left the queue while the screen was open (answered
 * by someone else, cancelled, timed out) and the screen shows no outcome of its own: it says so
 * before the reviewer spends time on it. `liveItems` null: the feed has not spoken yet.
 */
export function leftTheQueue(
  item: InterruptListItem | null,
  outcomeShown: boolean,
  liveItems: InterruptListItem[] | null,
): boolean {
  return (
    item !== null && !outcomeShown && liveItems !== null && !liveItems.some((i) => i.id === item.id)
  );
}

/** How each kind of answer is named in the notice that it was sent. */
export const LABELS: Record<DecisionKind, string> = {
  accept: "Acceptance",
  edit: "Edited arguments",
  respond: "Response",
  ignore: "Ignore",
};

/**
 * The key arguments an accept or an edit carries, as the notice restates them (`amount $60.00,
 * orderId 1042`): a reviewer sees what went, not only that something did.
 */
export function sentArgs(kind: DecisionKind, answer: unknown, decision: DecisionPayload): string {
  const args =
    kind === "accept"
      ? decision.args
      : kind === "edit" && typeof answer === "object" && answer !== null
        ? ((answer as { args?: Record<string, unknown> }).args ?? {})
        : null;
  if (!args) return "";
  return keyArgs(args, decision.units)
    .map((a) => `${a.name} ${a.text}`)
    .join(", ");
}
