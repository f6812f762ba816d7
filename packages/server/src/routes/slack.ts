/**
 * `POST /slack/interactivity`: Slack's request URL for button clicks. The request's signature is
 * checked against the raw body before anything is read from it; the click is applied (or refused)
 * before Slack gets its 200 (it allows three seconds), so a 200 never stands for a lost click;
 * then the outcome reaches the user as an ephemeral reply (`response_url`) and the message is
 * updated to show the approval state.
 */
import type { FastifyInstance } from "fastify";
import type { ServerContext } from "../context.ts";
import { defineRoute } from "./define.ts";
import { SlackApi } from "../notify/slack-api.ts";
import { parseInteraction } from "../notify/slack-actions.ts";
import { SLACK_API_URL, type SlackOptions } from "../notify/slack-config.ts";
import { decideClick, reportClick } from "../notify/slack-replies.ts";
import { verifySlackRequest } from "../notify/slack-signature.ts";

/** Registers the interactivity endpoint (only when Slack is configured). */
export function registerSlackRoutes(
  app: FastifyInstance,
  ctx: ServerContext,
  options: SlackOptions,
): void {
  const api = new SlackApi(options.apiUrl ?? SLACK_API_URL, options.botToken);
  // Clicks being reported after their 200: shutdown waits for them before draining runs.
  const working = new Set<Promise<void>>();
  app.addHook("preClose", () => Promise.allSettled([...working]).then(() => undefined));

  void app.register((scope, _options, registered) => {
    // The signature covers the bytes Slack sent: keep every body as raw text on this route.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) =>
      done(null, body),
    );
    defineRoute(
      scope,
      ctx,
      {
        method: "POST",
        url: "/slack/interactivity",
        operationId: "slackInteractivity",
        summary:
          "Slack's interactivity request URL: a click on Approve or Reject, signed by Slack (x-slack-signature over the raw body, timestamp within 5 minutes; else 401). The decision is applied as the Slack user's mapped principal, under the question's approval policy, before the 200 (or refused, and the user told why); the outcome is then posted to the click's response_url.",
        scope: null,
        headers: {
          "x-slack-signature": "`v0=` + hex HMAC-SHA256(signing secret, `v0:<timestamp>:<body>`).",
          "x-slack-request-timestamp": "Unix seconds when Slack sent the request.",
        },
        responses: { 200: null },
      },
      async ({ request }) => {
        const raw = typeof request.body === "string" ? request.body : "";
        verifySlackRequest(options.signingSecret, request.headers, raw);
        const click = parseInteraction(raw);
        if (click) {
          // The decision is stored before the 200 (a store transaction, well inside Slack's
          // three seconds); only telling Slack about it waits for no one.
          const outcome = await decideClick(ctx, options, click, request.log);
          const work = reportClick(ctx, options, api, click, outcome, request.log).finally(() =>
            working.delete(work),
          );
          working.add(work);
        }
        return { status: 200 as const };
      },
    );
    registered();
  });
}
