/**
 * How a question reads outside the console (email, link pages): a one-line summary, its
 * approval state, and the decisions a link may offer. Follows the decision convention the
 * console uses: a payload `{ action, args, description, allow }` can be approved (`accept`) or
 * rejected (`ignore`) as its `allow` permits; a plain question has no link decisions (its answer
 * is free-form: it is answered in the console).
 */
import type { ApprovalProgress, StoredApprovalPolicy } from "@rein/core/store";
import type { LinkDecision } from "./tokens.ts";

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A short, single-line summary of a question's payload (at most `max` characters). */
export function questionSummary(payload: unknown, max = 160): string {
  let text: string;
  if (isObject(payload) && typeof payload["action"] === "string") {
    const description =
      typeof payload["description"] === "string" && payload["description"] !== ""
        ? `: ${payload["description"]}`
        : "";
    text = `${payload["action"]} ${JSON.stringify(payload["args"] ?? {})}${description}`;
  } else if (isObject(payload) && typeof payload["question"] === "string") {
    text = payload["question"];
  } else if (typeof payload === "string") {
    text = payload;
  } else {
    text = JSON.stringify(payload ?? null);
  }
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The decisions a link may apply to a question with this payload. */
export function linkDecisions(payload: unknown): LinkDecision[] {
  if (!isObject(payload) || typeof payload["action"] !== "string") return [];
  const allow = payload["allow"];
  if (!isObject(allow)) return [];
  return [
    ...(allow["accept"] === true ? (["approve"] as const) : []),
    ...(allow["ignore"] === true ? (["reject"] as const) : []),
  ];
}

/**
 * The approval state, e.g. `1 of 2: alice`; `null` for a question without a policy (one answer
 * applies it).
 */
export function approvalState(
  policy: StoredApprovalPolicy | null | undefined,
  progress: ApprovalProgress | null | undefined,
): string | null {
  if (!policy) return null;
  const approvals = progress?.approvals ?? [];
  const who = approvals.map((a) => a.actor).join(", ");
  return `${approvals.length} of ${policy.count}${who ? `: ${who}` : ""}`;
}

/** The console's page of one question: `{publicUrl}/#/threads/<thread>/interrupts/<id>`. */
export function consoleLink(publicUrl: string, threadId: string, interruptId: string): string {
  const e = encodeURIComponent;
  return `${publicUrl.replace(/\/+$/, "")}/#/threads/${e(threadId)}/interrupts/${e(interruptId)}`;
}

/**
 * Where a question comes from, in words: its graph, after the app's (the run tree's root) when a
 * sub-agent asks, e.g. `support-desk › refund_agent`.
 */
export function graphLabel(interrupt: {
  graph: string;
  path: readonly { graph: string }[];
}): string {
  const root = interrupt.path[0]?.graph ?? interrupt.graph;
  return root === interrupt.graph ? interrupt.graph : `${root} › ${interrupt.graph}`;
}
