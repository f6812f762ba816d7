/**
 * What a click does: applied (or refused) before Slack has its 200; then the question's message
 * updated to show who decided or the approvals so far, and the clicking user told the outcome in
 * an ephemeral reply through the click's `response_url`.
 */
import type { FastifyBaseLogger } from "fastify";
import type { ServerContext } from "../context.ts";
import { respond, type SlackApi } from "./slack-api.ts";
import { applyClick, type ClickOutcome, type SlackClick } from "./slack-actions.ts";
import type { SlackOptions } from "./slack-config.ts";
import { renderMessage } from "./slack-message.ts";
import { messageOf, questionView } from "./slack-state.ts";

/**
 * Applies a click: its decision is stored (or refused) before Slack gets its 200, so an accepted
 * click is never lost to a crash between the answer and the store. Never throws: a failure is a
 * refusal the user is told of.
 */
export async function decideClick(
  ctx: ServerContext,
  options: SlackOptions,
  click: SlackClick,
  log: FastifyBaseLogger,
): Promise<ClickOutcome> {
  try {
    return await applyClick(ctx, options.people, click);
  } catch (error) {
    log.error({ err: error }, "slack click failed");
    return {
      kind: "refused",
      reason: "busy",
      message:
        "Rein could not apply this click (the error is logged): nothing was applied. Try again.",
    };
  }
}

/**
 * Tells Slack what came of a click, after its 200: the message updated to the approval state,
 * and the clicking user told in an ephemeral reply. Never throws: failures are logged.
 */
export async function reportClick(
  ctx: ServerContext,
  options: SlackOptions,
  api: SlackApi,
  click: SlackClick,
  outcome: ClickOutcome,
  log: FastifyBaseLogger,
): Promise<void> {
  if (outcome.kind === "ignored") return;
  log.info(
    {
      slackUser: click.userId,
      outcome: outcome.kind === "applied" ? outcome.status : outcome.reason,
    },
    "slack click",
  );
  if (outcome.kind === "applied")
    await showState(ctx, options, api, outcome, click).catch((error: unknown) =>
      log.warn({ err: error }, "slack chat.update failed"),
    );
  const text =
    outcome.kind === "refused"
      ? outcome.message
      : outcome.status === "approval_recorded"
        ? "Your approval is recorded; the question waits for more approvals."
        : null;
  if (text !== null && click.responseUrl !== null)
    await respond(click.responseUrl, {
      response_type: "ephemeral",
      replace_original: false,
      text,
    }).catch((error: unknown) => log.warn({ err: error }, "slack response_url reply failed"));
}

/** Updates the question's message to show who decided, or the approvals so far ("1 of 2"). */
async function showState(
  ctx: ServerContext,
  options: SlackOptions,
  api: SlackApi,
  outcome: Extract<ClickOutcome, { kind: "applied" }>,
  click: SlackClick,
): Promise<void> {
  // The message clicked on, as Slack says; else the question's first message.
  const where =
    click.channel !== null && click.messageTs !== null
      ? { channel: click.channel, ts: click.messageTs }
      : await messageOf(ctx.store, outcome.threadId, outcome.interruptId);
  const view = await questionView(ctx.store, outcome.interruptId, null);
  if (!where || !view) return;
  await api.update(where.channel, where.ts, renderMessage(view, options.publicUrl));
}
