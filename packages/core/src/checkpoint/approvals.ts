/**
 * Approval policies as a store enforces them: the resolved policy stored with an interrupt, the
 * approvals recorded so far, and the one decision every store makes inside its answer
 * transaction — refuse the answer, record it as one more approval, or apply it. Plain data and
 * pure functions, so the three backends (and the Postgres planner that re-checks under locks)
 * cannot drift.
 */
import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type { ApprovalEntry, ApprovalPrincipal, Approvers, InterruptApproval } from "../types.ts";
import type { NotAllowedRuleName } from "../errors.ts";

/** A policy as resolved when its question was raised, stored with the interrupt row. */
export interface StoredApprovalPolicy {
  subjects?: string[];
  groups?: string[];
  roles?: string[];
  count: number;
  notRequester: boolean;
  /** Who started the root run (the actor of its first call); `null` when unknown. */
  requester: string | null;
  /** Digest of the interrupt's payload, as each approval records it. */
  digest: string;
}

/** The approvals an interrupt has gathered, stored beside its policy (mutable, unlike it). */
export interface ApprovalProgress {
  approvals: ApprovalEntry[];
  /**
   * The answer the recorded approvals agree on: it is what applies at the last approval. An
   * `accept` keeps it; another value (an edit, or any plain answer) that differs restarts the
   * count with that value.
   */
  candidate: unknown;
}

/** Why a principal may not answer (the `rule` of a `NotAllowedError`): declared once, in errors.ts. */
export type NotAllowedRule = NotAllowedRuleName;

/** What an answer does to an interrupt under its policy. */
export type ApprovalStep =
  | { kind: "refuse"; rule: NotAllowedRule }
  /** Resolve the interrupt with `value` (the count is reached, or an authorised rejection). */
  | { kind: "apply"; value: unknown; progress: ApprovalProgress | null }
  /** Record one more approval; the interrupt stays pending. */
  | { kind: "record"; progress: ApprovalProgress };

/** `sha256:` + the hex digest of a value's canonical JSON (object keys sorted). */
export function payloadDigest(value: unknown): string {
  return `sha256:${createHash("sha256").update(canonicalJson(value)).digest("hex")}`;
}

/** JSON with object keys sorted at every depth, so equal values give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value === undefined ? null : value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : v,
  );
}

/**
 * Resolves declared approvers into the stored policy: `count` defaults to 1, `notRequester` to
 * whether `count` is 2 or more.
 *
 * @throws RangeError when `count` is not a positive integer.
 */
export function storedPolicy(
  approvers: Approvers,
  requester: string | null,
  payload: unknown,
): StoredApprovalPolicy {
  const count = approvers.count ?? 1;
  if (!Number.isInteger(count) || count < 1)
    throw new RangeError(`An approval count must be a positive integer; got ${String(count)}.`);
  return {
    ...(approvers.subjects ? { subjects: [...approvers.subjects] } : {}),
    ...(approvers.groups ? { groups: [...approvers.groups] } : {}),
    ...(approvers.roles ? { roles: [...approvers.roles] } : {}),
    count,
    notRequester: approvers.notRequester ?? count >= 2,
    requester,
    digest: payloadDigest(payload),
  };
}

/** The public view of a stored policy and its progress (the interrupt's `approval` field). */
export function approvalView(
  policy: StoredApprovalPolicy,
  progress: ApprovalProgress | null | undefined,
): InterruptApproval {
  const { requester: _r, digest: _d, ...rule } = policy;
  return { required: policy.count, approvals: progress?.approvals ?? [], policy: rule };
}

/**
 * Whether `principal` is listed by a policy's subjects, groups or roles (no lists: anyone). The
 * one rule for who may answer, and for whom a notifier tells.
 */
export function listed(
  policy: {
    subjects?: readonly string[] | undefined;
    groups?: readonly string[] | undefined;
    roles?: readonly string[] | undefined;
  },
  principal: ApprovalPrincipal,
): boolean {
  const { subjects, groups, roles } = policy;
  if (!subjects && !groups && !roles) return true;
  return (
    (subjects?.includes(principal.subject) ?? false) ||
    (groups?.some((g) => principal.groups?.includes(g)) ?? false) ||
    (roles?.some((r) => principal.roles?.includes(r)) ?? false)
  );
}

/** The decision of the prebuilt tool node's convention, when `value` is one. */
function decisionType(value: unknown): string | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const type = (value as { type?: unknown }).type;
  return type === "accept" || type === "edit" || type === "respond" || type === "ignore"
    ? type
    : undefined;
}

/**
 * What `value`, answered by `principal` at `at`, does to an interrupt with `policy` and the
 * approvals `progress` recorded so far.
 *
 * A listed principal's `ignore` rejects at once; an `accept` adds an approval to the candidate
 * answer; any other value adds an approval when it equals the candidate and otherwise restarts
 * the count with itself as the candidate (an edited call needs its own approvals). The same
 * principal counts once: approving again is refused as `already_approved`.
 */
export function approvalStep(
  policy: StoredApprovalPolicy,
  progress: ApprovalProgress | null | undefined,
  principal: ApprovalPrincipal | null | undefined,
  value: unknown,
  at: string,
): ApprovalStep {
  if (!principal) return { kind: "refuse", rule: "no_principal" };
  if (!listed(policy, principal)) return { kind: "refuse", rule: "not_listed" };
  if (policy.notRequester && policy.requester !== null && principal.subject === policy.requester)
    return { kind: "refuse", rule: "requester" };
  const type = decisionType(value);
  if (type === "ignore") return { kind: "apply", value, progress: progress ?? null };
  const entry: ApprovalEntry = { actor: principal.subject, digest: policy.digest, at };
  const endorses =
    progress !== null &&
    progress !== undefined &&
    (type === "accept" || isDeepStrictEqual(progress.candidate, value));
  if (endorses && progress.approvals.some((a) => a.actor === principal.subject))
    return { kind: "refuse", rule: "already_approved" };
  const next: ApprovalProgress = endorses
    ? { approvals: [...progress.approvals, entry], candidate: progress.candidate }
    : { approvals: [entry], candidate: value };
  return next.approvals.length >= policy.count
    ? { kind: "apply", value: next.candidate, progress: next }
    : { kind: "record", progress: next };
}

/** What a refusal says, for the `NotAllowedError` message. */
export function refusalText(rule: NotAllowedRule, policy: StoredApprovalPolicy): string {
  const who = [
    ...(policy.subjects ?? []).map((s) => `subject ${s}`),
    ...(policy.groups ?? []).map((g) => `group ${g}`),
    ...(policy.roles ?? []).map((r) => `role ${r}`),
  ].join(", ");
  switch (rule) {
    case "no_principal":
      return "This question has an approval policy and the answer names no principal: pass { principal } with the answer (the server passes the token's).";
    case "not_listed":
      return `Only ${who} may answer this question; answer with a token that carries one of them.`;
    case "requester":
      return "The person who started this run may not approve it (four eyes): ask someone else.";
    case "already_approved":
      return `You approved this already; it needs ${policy.count} distinct approvals, so another person must approve it.`;
  }
}
