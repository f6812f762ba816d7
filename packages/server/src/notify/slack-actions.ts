/**
 * A click on a Slack button, applied: the Slack user is mapped to a principal (`people`), the
 * button is checked against the question as it is now (still pending, same payload digest), and
 * the decision goes through the same path as `POST /interrupts/decisions` — so the approval
 * policy (who is listed, four eyes, N of M) is enforced by the store, as for any other answer.
 */
import {
  BulkRefusedError,
  InvalidInputError,
  ReinError,
  decideInterrupts,
  payloadDigest,
  type ApprovalPrincipal,
} from "@rein/core";
import type { Principal } from "../auth.ts";
import type { ServerContext } from "../context.ts";
import { continueThreads } from "../continue-threads.ts";
import type { SlackPerson } from "./slack-config.ts";
import {
  APPROVE_ACTION,
  BUTTON_ANSWERS,
  REJECT_ACTION,
  parseButtonValue,
  type ButtonValue,
} from "./slack-message.ts";
import { interruptIdOf } from "../ids.ts";

/** One button click, as read from a `block_actions` payload. */
export interface SlackClick {
  /** The Slack user who clicked (`user.id`). */
  userId: string;
  /** Where to reply (ephemeral messages, valid 30 minutes). */
  responseUrl: string | null;
  actionId: string;
  value: unknown;
  /** The message the button is on, when Slack says. */
  channel: string | null;
  messageTs: string | null;
}

/** What a click did. */
export type ClickOutcome =
  /** Not a decision button (the Open link), or not a block action: nothing to do. */
  | { kind: "ignored" }
  /** Nothing applied; `message` tells the user why. */
  | { kind: "refused"; reason: RefusalReason; message: string }
  /** Applied: the question is answered, or one more approval is recorded. */
  | {
      kind: "applied";
      status: "answered" | "approval_recorded";
      interruptId: string;
      threadId: string;
      person: SlackPerson;
    };

/** Why a click applied nothing. */
export type RefusalReason = "unmapped" | "stale" | "changed" | "not_allowed" | "invalid" | "busy";

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/**
 * The click of an interactivity request body (`application/x-www-form-urlencoded` with a
 * `payload` JSON field); `null` for a payload that is not a `block_actions` one.
 *
 * @throws InvalidInputError when the body has no `payload` JSON object.
 */
export function parseInteraction(rawBody: string): SlackClick | null {
  const field = new URLSearchParams(rawBody).get("payload");
  let payload: unknown;
  try {
    payload = field === null ? null : JSON.parse(field);
  } catch {
    payload = null;
  }
  if (!isObject(payload))
    throw new InvalidInputError("A Slack interaction carries a `payload` field of JSON.");
  if (payload["type"] !== "block_actions") return null;
  const actions: unknown = payload["actions"];
  const action: unknown = Array.isArray(actions) ? (actions as unknown[])[0] : undefined;
  const user = isObject(payload["user"]) ? payload["user"] : {};
  const container = isObject(payload["container"]) ? payload["container"] : {};
  const channel = isObject(payload["channel"]) ? payload["channel"] : {};
  const userId = str(user["id"]);
  if (!isObject(action) || userId === null) return null;
  return {
    userId,
    responseUrl: str(payload["response_url"]),
    actionId: str(action["action_id"]) ?? "",
    value: action["value"],
    channel: str(channel["id"]) ?? str(container["channel_id"]),
    messageTs: str(container["message_ts"]),
  };
}

function refused(reason: RefusalReason, message: string): ClickOutcome {
  return { kind: "refused", reason, message };
}

/** The principal a mapped person acts as (groups and roles as configured). */
export function principalOf(person: SlackPerson): Principal {
  return {
    subject: person.subject,
    tenant: person.tenant ?? null,
    scopes: new Set(["resume"]),
    groups: person.groups ?? [],
    roles: person.roles ?? [],
  };
}

/** Applies a click as the person mapped to its Slack user, or says why it applies nothing. */
export async function applyClick(
  ctx: ServerContext,
  people: readonly SlackPerson[],
  click: SlackClick,
): Promise<ClickOutcome> {
  if (click.actionId !== APPROVE_ACTION && click.actionId !== REJECT_ACTION)
    return { kind: "ignored" };
  const button = parseButtonValue(click.value);
  if (!button) return refused("invalid", "This button is not one Rein made: nothing was applied.");
  const person = people.find((p) => p.slackUserId === click.userId);
  if (!person)
    return refused(
      "unmapped",
      "Your Slack account is not mapped to a Rein principal, so nothing was applied. Ask an administrator to add your Slack user id to `people` in the Slack configuration.",
    );
  const stale = await staleness(ctx, person, button);
  if (stale) return stale;
  const principal = principalOf(person);
  const approver: ApprovalPrincipal = {
    subject: person.subject,
    groups: principal.groups,
    roles: principal.roles,
  };
  try {
    const decided = await decideInterrupts(ctx.store, {
      ids: [button.interruptId],
      value: BUTTON_ANSWERS[button.decision],
      actor: person.subject,
      principal: approver,
      ...(person.tenant !== undefined ? { tenant: person.tenant } : {}),
      ...(ctx.registry.all()[0] ? { lease: ctx.registry.all()[0]?.leaseSettings } : {}),
    });
    await continueThreads(ctx, principal, decided);
    const [one] = decided;
    if (!one) return refused("stale", "This question is no longer pending: nothing was applied.");
    return {
      kind: "applied",
      status: one.status,
      interruptId: one.interruptId,
      threadId: one.threadId,
      person,
    };
  } catch (error) {
    return refusalOf(error);
  }
}

/** Why a button no longer fits its question, if it does not. */
async function staleness(
  ctx: ServerContext,
  person: SlackPerson,
  button: ButtonValue,
): Promise<ClickOutcome | null> {
  const [row] = await ctx.store.getInterrupts([interruptIdOf(button.interruptId)]);
  if (!row || (person.tenant !== undefined && row.tenant !== person.tenant))
    return refused("stale", "This question no longer exists: nothing was applied.");
  if (row.status !== "pending")
    return refused(
      "stale",
      `This question is already ${row.status}${row.answeredBy ? ` (by ${row.answeredBy})` : ""}: nothing was applied.`,
    );
  if (payloadDigest(row.payload) !== button.digest)
    return refused(
      "changed",
      "This question changed since the message was posted: nothing was applied. Open it in the console to see it as it is now.",
    );
  return null;
}

function refusalOf(error: unknown): ClickOutcome {
  if (error instanceof BulkRefusedError) {
    const first = error.details.refused[0];
    const code = first?.code;
    const message = first?.message ?? error.message;
    if (code === "not_allowed") return refused("not_allowed", `Not allowed: ${message}`);
    if (code === "invalid_answer")
      return refused("invalid", `This question does not take that answer: ${message}`);
    return refused("stale", `This question is no longer pending: nothing was applied.`);
  }
  if (ReinError.is(error) && error.code === "thread_busy")
    return refused(
      "busy",
      "The run is busy right now: nothing was applied. Try again in a moment.",
    );
  throw error;
}
