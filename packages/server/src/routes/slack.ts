/**
 * `POST /slack/interactivity`: Slack's request URL for button clicks. The request's signature is
 * checked against the raw body before anything is read from it; Slack gets its 200 at once (it
 * allows three seconds), and the click is applied after: the outcome reaches the user as an
 * ephemeral reply (`response_url`) and the message is updated to show the approval state.
 */
import type { FastifyInstance } from "fastify";
import type { ServerContext } from "../context.ts";
import { defineRoute } from "../route.ts";
import { SlackApi } from "../notify/slack-api.ts";
import { parseInteraction } from "../notify/slack-actions.ts";
import { SLACK_API_URL, type SlackOptions } from "../notify/slack-config.ts";
import { answerClick } from "../notify/slack-replies.ts";
import { verifySlackRequest } from "../notify/slack-signature.ts";

/** Registers the interactivity endpoint (only when Slack is configured). */
export function registerSlackRoutes(
  app: FastifyInstance,
  ctx: ServerContext,
  options: SlackOptions,
): void {
  const api = new SlackApi(options.apiUrl ?? SLACK_API_URL, options.botToken);
  // Clicks being applied after their 200: shutdown waits for them before draining runs.
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
          "Slack's interactivity request URL: a click on Approve or Reject, signed by Slack (x-slack-signature over the raw body, timestamp within 5 minutes; else 401). Answered 200 at once; the decision applies as the Slack user's mapped principal, under the question's approval policy, and the outcome is posted to the click's response_url.",
        scope: null,
        headers: {
          "x-slack-signature": "`v0=` + hex HMAC-SHA256(signing secret, `v0:<timestamp>:<body>`).",
          "x-slack-request-timestamp": "Unix seconds when Slack sent the request.",
        },
        responses: { 200: null },
      },
      ({ request }) => {
        const raw = typeof request.body === "string" ? request.body : "";
        verifySlackRequest(options.signingSecret, request.headers, raw);
        const click = parseInteraction(raw);
        if (click) {
          const work = answerClick(ctx, options, api, click, request.log).finally(() =>
            working.delete(work),
          );
          working.add(work);
        }
        return Promise.resolve({ status: 200 });
      },
    );
    registered();
  });
}
