/**
 * The escalation ladder of a question: reminders, an escalation that widens who may answer, then
 * the deadline. Planned once when the question is raised (absolute times, each after the one
 * before) and walked by the deadline timer one step at a time: the row's `deadline` always holds
 * the next step's time, so the timer's one indexed query finds ladder steps and deadlines alike.
 */
import { randomUUID } from "node:crypto";
import type { StoredApprovalPolicy } from "../checkpoint/approvals.ts";
import type {
  LadderStage,
  LadderStepWrite,
  StoredInterrupt,
  StoredLadder,
} from "../checkpoint/types.ts";
import { InvalidLadderError } from "../errors.ts";
import type { Duration, EscalateOption } from "../graph/node.ts";
import type { EscalationTargets, InterruptEscalation } from "../types.ts";
import { parseDuration } from "./duration.ts";

/** The ladder options of an `interrupt()` call (times counted from the question being raised). */
export interface LadderOptions {
  /** Remind the same people after this long; a list for repeated reminders (ascending). */
  remind?: Duration | readonly Duration[];
  /** Escalate after `after`: emit `interrupt.escalated` and let `approvers` answer too. */
  escalate?: EscalateOption;
  /** Deadline: `onTimeout` applies after this long. */
  timeout?: Duration;
}

/** The actor ladder steps are recorded under (the deadline timer's). */
const TIMER = "system:timer";

function durationOf(value: Duration, what: string): number {
  try {
    return parseDuration(value);
  } catch (error) {
    throw new InvalidLadderError(
      `${what}: ${error instanceof Error ? error.message : String(error)}`,
      { rule: "duration", step: what, value },
    );
  }
}

function hasTargets(targets: EscalationTargets | undefined): targets is EscalationTargets {
  return (
    targets !== undefined &&
    targets !== null &&
    typeof targets === "object" &&
    [targets.subjects, targets.groups, targets.roles].some(
      (list) => Array.isArray(list) && list.length > 0,
    )
  );
}

/**
 * Plans the ladder and first timer step of a question raised at `now`: `ladder` is `null` without
 * `remind` or `escalate` (a plain deadline, stored as before); `deadline` is the first step's time.
 *
 * @throws InvalidLadderError when a step's time is not after the previous one's
 * (`remind` < `escalate.after` < `timeout`), a duration is malformed, or an escalation names
 * no subject, group or role.
 */
export function planLadder(
  options: LadderOptions,
  now: Date,
): { ladder: StoredLadder | null; deadline: string | null } {
  const at = (ms: number) => new Date(now.getTime() + ms).toISOString();
  const timeoutMs = options.timeout === undefined ? null : durationOf(options.timeout, "timeout");
  if (options.remind === undefined && options.escalate === undefined)
    return { ladder: null, deadline: timeoutMs === null ? null : at(timeoutMs) };
  const reminders =
    options.remind === undefined
      ? []
      : (Array.isArray(options.remind)
          ? [...(options.remind as Duration[])]
          : [options.remind as Duration]
        ).map((value, i) => ({ what: `remind[${i}]`, ms: durationOf(value, `remind[${i}]`) }));
  const steps = [...reminders];
  let escalateTo: EscalationTargets | null = null;
  if (options.escalate !== undefined) {
    if (!hasTargets(options.escalate.approvers))
      throw new InvalidLadderError(
        "escalate.approvers must name at least one subject, group or role to escalate to.",
        { rule: "approvers" },
      );
    const { subjects, groups, roles } = options.escalate.approvers;
    escalateTo = {
      ...(subjects?.length ? { subjects: [...subjects] } : {}),
      ...(groups?.length ? { groups: [...groups] } : {}),
      ...(roles?.length ? { roles: [...roles] } : {}),
    };
    steps.push({
      what: "escalate.after",
      ms: durationOf(options.escalate.after, "escalate.after"),
    });
  }
  if (timeoutMs !== null) steps.push({ what: "timeout", ms: timeoutMs });
  for (let i = 1; i < steps.length; i++) {
    const before = steps[i - 1];
    const step = steps[i];
    if (before && step && step.ms <= before.ms)
      throw new InvalidLadderError(
        `Each ladder step must come after the one before (remind < escalate.after < timeout): ${step.what} (${step.ms} ms) is not after ${before.what} (${before.ms} ms).`,
        { rule: "order", step: step.what, after: before.what },
      );
  }
  const ladder: StoredLadder = {
    remindAt: reminders.map((r) => at(r.ms)),
    escalateAt:
      options.escalate === undefined
        ? null
        : at(durationOf(options.escalate.after, "escalate.after")),
    escalateTo,
    timeoutAt: timeoutMs === null ? null : at(timeoutMs),
  };
  return { ladder, deadline: stepTimes(ladder)[0] ?? null };
}

/** Every step time of a ladder in order: reminders, escalation, timeout. */
function stepTimes(ladder: StoredLadder): string[] {
  return [
    ...ladder.remindAt,
    ...(ladder.escalateAt === null ? [] : [ladder.escalateAt]),
    ...(ladder.timeoutAt === null ? [] : [ladder.timeoutAt]),
  ];
}

/** What the timer does at a pending interrupt's `deadline`: a ladder step, or resolve it. */
export type DueStep = { kind: "remind" | "escalate"; at: string } | { kind: "timeout" };

/** The step due at `record.deadline` (without a ladder, or at its timeout: resolve). */
export function dueStep(record: StoredInterrupt): DueStep {
  const { ladder, deadline } = record;
  if (!ladder || deadline == null) return { kind: "timeout" };
  if (ladder.escalateAt === deadline) return { kind: "escalate", at: deadline };
  if (ladder.remindAt.includes(deadline)) return { kind: "remind", at: deadline };
  return { kind: "timeout" };
}

/**
 * The policy an escalation leaves: the policy's lists widened by the escalation's targets (count
 * and `notRequester` as they were). No policy, or one without lists (anyone may answer), stays.
 */
export function widenedPolicy(
  policy: StoredApprovalPolicy | null | undefined,
  to: EscalationTargets | null,
): StoredApprovalPolicy | null | undefined {
  if (!policy || !to || (!policy.subjects && !policy.groups && !policy.roles)) return undefined;
  const union = (a: readonly string[] | undefined, b: readonly string[] | undefined) => {
    const all = [...new Set([...(a ?? []), ...(b ?? [])])];
    return all.length > 0 ? all : undefined;
  };
  const subjects = union(policy.subjects, to.subjects);
  const groups = union(policy.groups, to.groups);
  const roles = union(policy.roles, to.roles);
  const { subjects: _s, groups: _g, roles: _r, ...rest } = policy;
  return {
    ...(subjects ? { subjects } : {}),
    ...(groups ? { groups } : {}),
    ...(roles ? { roles } : {}),
    ...rest,
  };
}

/** The write that takes `step` of `record` at `now` (see `EscalationLadderStore.takeLadderStep`). */
export function ladderStepWrite(
  record: StoredInterrupt,
  step: Extract<DueStep, { kind: "remind" | "escalate" }>,
  now: Date,
): LadderStepWrite {
  const ladder = record.ladder as StoredLadder;
  const times = stepTimes(ladder);
  const next = times[times.indexOf(step.at) + 1] ?? null;
  const stage: LadderStage = step.kind === "escalate" ? "escalated" : "reminded";
  const reminder = ladder.remindAt.indexOf(step.at) + 1;
  const policy =
    step.kind === "escalate" ? widenedPolicy(record.policy, ladder.escalateTo) : undefined;
  return {
    threadId: record.threadId,
    id: record.id,
    at: step.at,
    next,
    stage,
    ...(policy !== undefined ? { policy } : {}),
    audit: {
      id: randomUUID(),
      threadId: record.threadId,
      runId: record.runId,
      interruptId: record.id,
      action: step.kind,
      actor: TIMER,
      data:
        step.kind === "escalate"
          ? { dueAt: step.at, escalatedTo: ladder.escalateTo }
          : { dueAt: step.at, reminder },
      createdAt: now.toISOString(),
    },
  };
}

/** The public view of a stored ladder (the interrupt's `escalation` field). */
export function escalationView(record: StoredInterrupt): InterruptEscalation | undefined {
  const ladder = record.ladder;
  if (!ladder) return undefined;
  return {
    stage: record.stage ?? "none",
    remindAt: [...ladder.remindAt],
    escalateAt: ladder.escalateAt,
    escalatedTo: ladder.escalateTo,
    timeoutAt: ladder.timeoutAt,
    nextAt: record.status === "pending" ? (record.deadline ?? null) : null,
  };
}
