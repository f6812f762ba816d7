/**
 * Declaring who may answer a question: a fixed {@link Approvers} policy, a small declarative
 * rule over the payload (the form a JSON config file can hold), or a pure function of the
 * payload. Resolved once, when the question is raised, into the plain policy the store enforces.
 */
import { storedPolicy, type StoredApprovalPolicy } from "../checkpoint/approvals.ts";
import { InvalidInputError } from "../errors.ts";
import type { ApproverCondition, ApproverRule, ApproversSpec } from "../graph/node.ts";
import type { Approvers } from "../types.ts";

/** The value at a dotted path of `value` (`undefined` when a step is missing). */
function valueAt(value: unknown, path: string): unknown {
  let at: unknown = value;
  for (const key of path.split(".")) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/** Whether `condition` holds for `payload` (every test it names must hold). */
export function conditionHolds(condition: ApproverCondition, payload: unknown): boolean {
  const value = valueAt(payload, condition.path);
  if ("eq" in condition && JSON.stringify(value) !== JSON.stringify(condition.eq)) return false;
  const bounds = [condition.gt, condition.gte, condition.lt, condition.lte];
  if (bounds.every((b) => b === undefined)) return "eq" in condition;
  if (typeof value !== "number") return false;
  return (
    (condition.gt === undefined || value > condition.gt) &&
    (condition.gte === undefined || value >= condition.gte) &&
    (condition.lt === undefined || value < condition.lt) &&
    (condition.lte === undefined || value <= condition.lte)
  );
}

function isRule(spec: object): spec is ApproverRule {
  return "then" in spec;
}

/** The approvers a spec gives for `payload` (`undefined`: no policy). */
export function approversFor<Payload>(
  spec: ApproversSpec<Payload> | undefined,
  payload: Payload,
): Approvers | undefined {
  if (spec === undefined) return undefined;
  if (typeof spec === "function") return spec(payload) ?? undefined;
  const rules: readonly ApproverRule[] | undefined = Array.isArray(spec)
    ? (spec as readonly ApproverRule[])
    : isRule(spec)
      ? [spec]
      : undefined;
  if (!rules) return spec as Approvers;
  const rule = rules.find((r) => r.when === undefined || conditionHolds(r.when, payload));
  return rule?.then ?? undefined;
}

/**
 * Resolves a spec into the policy stored with a question raised by `requester`'s run.
 *
 * @throws InvalidInputError when the policy's count is not a positive integer.
 */
export function resolvePolicy<Payload>(
  spec: ApproversSpec<Payload> | undefined,
  payload: Payload,
  requester: string | null,
): StoredApprovalPolicy | null {
  const approvers = approversFor(spec, payload);
  if (!approvers) return null;
  try {
    return storedPolicy(approvers, requester, payload);
  } catch (error) {
    throw new InvalidInputError(error instanceof Error ? error.message : String(error), {
      approvers,
    });
  }
}
