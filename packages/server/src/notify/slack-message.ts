/**
 * What a question looks like in Slack: a Block Kit message with its summary (graph, node, the
 * payload in brief — a tool call as its name and arguments), its approval state, and while it is
 * pending the Approve / Reject / Open buttons. Pure functions of the question's state, so the
 * notifier and the interactivity endpoint render the same message.
 */
import type { SlackMessage } from "./slack-api.ts";

/** `action_id` of the Approve button. */
export const APPROVE_ACTION = "rein_approve";
/** `action_id` of the Reject button. */
export const REJECT_ACTION = "rein_reject";
/** `action_id` of the Open button (a link: clicking it decides nothing). */
export const OPEN_ACTION = "rein_open";

/** The answers the buttons give (the decision convention of SPEC §3). */
export const BUTTON_ANSWERS = {
  approve: { type: "accept" },
  reject: { type: "ignore" },
} as const;

/** A button's decision. */
export type ButtonDecision = keyof typeof BUTTON_ANSWERS;

/** What a decision button's `value` carries: which question, which decision, which payload. */
export interface ButtonValue {
  interruptId: string;
  decision: ButtonDecision;
  /** `payloadDigest` of the question as posted: a click on a changed question is refused. */
  digest: string;
}

/** The state of a question the message shows. */
export interface QuestionView {
  interruptId: string;
  threadId: string;
  graph: string;
  node: string;
  payload: unknown;
  /** `payloadDigest(payload)`. */
  digest: string;
  /** `pending`, `answered`, `expired`, `cancelled`, … */
  status: string;
  /** Approvals needed (1 without a policy). */
  required: number;
  /** Who approved so far (N of M). */
  approvals: readonly string[];
  /** Who answered, once answered (or `system:timer`). */
  actor: string | null;
  /** The answer, once answered. */
  decision: unknown;
  /** A reminder or an escalation of a question posted before. */
  notice?: "reminded" | "escalated";
}

/** Longest payload text a message shows (Slack allows 3,000 characters per section). */
const MAX_PAYLOAD_TEXT = 1500;

/** Escapes the three characters Slack's mrkdwn treats as control characters. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The payload in brief: a tool call (`{ action, args }`) as its name and arguments. */
export function payloadSummary(payload: unknown): string {
  if (isObject(payload) && typeof payload["action"] === "string") {
    const args = isObject(payload["args"]) ? payload["args"] : {};
    const description =
      typeof payload["description"] === "string" && payload["description"] !== ""
        ? `\n${escapeMrkdwn(clip(payload["description"], 300))}`
        : "";
    const json = clip(JSON.stringify(args, null, 1), MAX_PAYLOAD_TEXT);
    return `*Tool:* \`${escapeMrkdwn(clip(payload["action"], 100))}\`${description}\n\`\`\`${escapeMrkdwn(json)}\`\`\``;
  }
  if (payload === null || payload === undefined)
    return "_(the question is too large to show here: open it in the console)_";
  const text = typeof payload === "string" ? payload : JSON.stringify(payload, null, 1);
  return `\`\`\`${escapeMrkdwn(clip(text, MAX_PAYLOAD_TEXT))}\`\`\``;
}

/**
 * Which buttons a payload gets. Approve and Reject answer `{ type: "accept" | "ignore" }`, the
 * decision convention's answers: only a payload naming an `action` takes them, and its `allow`
 * (when it has one) can forbid either. Any other question is answered in the console (Open).
 */
function allowed(payload: unknown): Record<ButtonDecision, boolean> {
  if (!isObject(payload) || typeof payload["action"] !== "string")
    return { approve: false, reject: false };
  const allow = isObject(payload["allow"]) ? payload["allow"] : null;
  if (!allow) return { approve: true, reject: true };
  return { approve: allow["accept"] === true, reject: allow["ignore"] === true };
}

function decisionType(decision: unknown): string | null {
  return isObject(decision) && typeof decision["type"] === "string" ? decision["type"] : null;
}

/** One line of approval state: "Waiting for approval · 1 of 2: alice", "Approved by bob". */
export function stateLine(view: QuestionView): string {
  const who = (name: string | null) => `*${escapeMrkdwn(name ?? "someone")}*`;
  const progress =
    view.required > 1
      ? ` · ${view.approvals.length} of ${view.required}${view.approvals.length > 0 ? `: ${view.approvals.map((a) => escapeMrkdwn(a)).join(", ")}` : ""}`
      : "";
  switch (view.status) {
    case "pending":
      return `:hourglass_flowing_sand: Waiting for approval${progress}`;
    case "answered": {
      const type = decisionType(view.decision);
      const by =
        view.approvals.length > 1 ? view.approvals.map((a) => who(a)).join(", ") : who(view.actor);
      if (type === "accept") return `:white_check_mark: Approved by ${by}`;
      if (type === "ignore") return `:x: Rejected by ${who(view.actor)}`;
      if (type === "edit") return `:pencil2: Approved with edits by ${by}`;
      return `:speech_balloon: Answered by ${by}: \`${escapeMrkdwn(clip(JSON.stringify(view.decision ?? null), 200))}\``;
    }
    case "expired":
      return `:alarm_clock: Expired: the default answer applied (\`${escapeMrkdwn(clip(JSON.stringify(view.decision ?? null), 200))}\`)`;
    case "cancelled":
      return ":no_entry_sign: Cancelled: the run no longer needs an answer";
    case "superseded":
      return ":arrows_counterclockwise: Superseded: the question was asked again (see the newer message)";
    default:
      return `Status: ${escapeMrkdwn(view.status)}`;
  }
}

/** A decision button's `value` (Slack allows 2,000 characters; ids and digests are far shorter). */
export function buttonValue(value: ButtonValue): string {
  return JSON.stringify({ i: value.interruptId, d: value.decision, h: value.digest });
}

/** The button value a click carries, or `null` when it is not one Rein made. */
export function parseButtonValue(text: unknown): ButtonValue | null {
  if (typeof text !== "string" || text.length > 2000) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(raw)) return null;
  const { i, d, h } = raw;
  if (typeof i !== "string" || typeof h !== "string" || (d !== "approve" && d !== "reject"))
    return null;
  return { interruptId: i, decision: d, digest: h };
}

/** The console's page of a question. */
export function consoleLink(publicUrl: string, threadId: string, interruptId: string): string {
  const e = encodeURIComponent;
  return `${publicUrl.replace(/\/+$/, "")}/#/threads/${e(threadId)}/interrupts/${e(interruptId)}`;
}

/** The message of a question in its current state (buttons only while it is pending). */
export function renderMessage(view: QuestionView, publicUrl: string | undefined): SlackMessage {
  const title =
    view.notice === "escalated"
      ? "Escalated: approval needed"
      : view.notice === "reminded"
        ? "Reminder: approval needed"
        : "Approval needed";
  const where = `*${escapeMrkdwn(view.graph)}* › \`${escapeMrkdwn(view.node)}\``;
  const state = clip(stateLine(view), 2000);
  const blocks: unknown[] = [
    { type: "header", text: { type: "plain_text", text: clip(`${title}: ${view.graph}`, 150) } },
    {
      type: "section",
      text: { type: "mrkdwn", text: `${where}\n${payloadSummary(view.payload)}` },
    },
    { type: "context", elements: [{ type: "mrkdwn", text: state }] },
  ];
  const buttons: unknown[] = [];
  if (view.status === "pending") {
    const allow = allowed(view.payload);
    const value = (decision: ButtonDecision) =>
      buttonValue({ interruptId: view.interruptId, decision, digest: view.digest });
    if (allow.approve)
      buttons.push({
        type: "button",
        action_id: APPROVE_ACTION,
        text: { type: "plain_text", text: "Approve" },
        style: "primary",
        value: value("approve"),
      });
    if (allow.reject)
      buttons.push({
        type: "button",
        action_id: REJECT_ACTION,
        text: { type: "plain_text", text: "Reject" },
        style: "danger",
        value: value("reject"),
      });
  }
  if (publicUrl !== undefined)
    buttons.push({
      type: "button",
      action_id: OPEN_ACTION,
      text: { type: "plain_text", text: "Open" },
      url: consoleLink(publicUrl, view.threadId, view.interruptId),
    });
  if (buttons.length > 0)
    blocks.push({
      type: "actions",
      block_id: `rein:${view.interruptId}`.slice(0, 255),
      elements: buttons,
    });
  // `text` is what notifications and screen readers show.
  const text = `${title}: ${view.graph} › ${view.node} — ${state.replace(/^:[a-z_]+: /, "")}`;
  return { text: clip(text, 3000), blocks };
}
