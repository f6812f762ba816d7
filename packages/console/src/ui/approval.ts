/**
 * Approval policies in words (who may approve, how many must) and where the signed-in reviewer
 * stands: approved already, not listed, or free to approve. The page computes this from the
 * interrupt's `approval` and `GET /whoami` only to say so before a click; the server decides, and
 * its 403 is shown as it says.
 */
import type { ApprovalPolicy, InterruptApproval, NotAllowedRule, Whoami } from "@rein/client";

/** The id of the note that says why a control is held back (the approvals panel's). */
export const HOLD_NOTE_ID = "approval-standing";

/** The subject of an actor as shown: `alice@acme` reads `alice`. */
export function shortName(actor: string): string {
  const at = actor.indexOf("@");
  return at > 0 ? actor.slice(0, at) : actor;
}

/** `1 of 2: alice` — approvals so far, out of the count that applies the answer, with who. */
export function progressText(approval: InterruptApproval): string {
  const who = approval.approvals.map((a) => shortName(a.actor)).join(", ");
  return `${approval.approvals.length} of ${approval.required}${who ? `: ${who}` : ""}`;
}

const list = (items: readonly string[]): string =>
  items.length <= 1
    ? (items[0] ?? "")
    : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1] ?? ""}`;

/** Whether the run's requester is kept from approving (default: when two or more must). */
export function excludesRequester(policy: ApprovalPolicy, required: number): boolean {
  return policy.notRequester ?? required >= 2;
}

/**
 * The policy in a sentence: `needs 2 approvers from finance; not the requester`. Subjects,
 * groups and roles are alternatives (any one admits a principal).
 */
export function policyText(policy: ApprovalPolicy, required: number): string {
  const who: string[] = [];
  if (policy.groups?.length) who.push(`from ${list(policy.groups)}`);
  if (policy.roles?.length) who.push(`with role ${list(policy.roles)}`);
  if (policy.subjects?.length) who.push(`among ${list(policy.subjects.map(shortName))}`);
  const count = required === 1 ? "needs 1 approver" : `needs ${required} approvers`;
  const text = who.length > 0 ? `${count} ${who.join(" or ")}` : count;
  return excludesRequester(policy, required) ? `${text}; not the requester` : text;
}

/**
 * Whether the policy lists the principal (by subject, or a group or role of its token); a policy
 * without any list admits anyone who may resume. The store's own check reads the same.
 */
export function listed(policy: ApprovalPolicy, me: Whoami): boolean {
  const { subjects, groups, roles } = policy;
  if (!subjects && !groups && !roles) return true;
  return (
    (subjects?.includes(me.subject) ?? false) ||
    (groups?.some((g) => me.groups.includes(g)) ?? false) ||
    (roles?.some((r) => me.roles.includes(r)) ?? false)
  );
}

/** Where the reviewer stands on one interrupt before answering it. */
export type Standing =
  | { kind: "free" }
  /** This reviewer's approval is counted: approving again is refused; rejecting is not. */
  | { kind: "approved"; note: string }
  /** The policy does not list this reviewer: every answer would be refused. */
  | { kind: "not_listed"; note: string };

/** The reviewer's standing on an interrupt governed by `approval` (none: free). */
export function standingOf(approval: InterruptApproval | undefined, me: Whoami): Standing {
  if (!approval) return { kind: "free" };
  if (!listed(approval.policy, me))
    return {
      kind: "not_listed",
      note: `You may not answer this: it ${policyText(approval.policy, approval.required)}, and your token is not among them.`,
    };
  if (approval.approvals.some((a) => a.actor === me.subject)) {
    const left = approval.required - approval.approvals.length;
    return {
      kind: "approved",
      note: `You approved; waiting for ${left === 1 ? "another approver" : `${left} more approvers`}.`,
    };
  }
  return { kind: "free" };
}

const RULE_WORDS: Record<NotAllowedRule, string> = {
  not_listed: "The approval policy does not list you.",
  requester: "You started this run, and its policy does not let the requester approve it.",
  already_approved: "You approved this already; your approval counts once.",
  no_principal: "The server could not tell who answered, and a policy needs to know.",
};

/**
 * A 403 `not_allowed` in words: the rule, the server's own message (written for people, it names
 * who may answer), and that nothing was applied. The approvals panel beside it shows the policy.
 */
export function refusalText(rule: NotAllowedRule, message: string): string {
  return `Not allowed: ${RULE_WORDS[rule]} The server said: ${message} Nothing was applied.`;
}
