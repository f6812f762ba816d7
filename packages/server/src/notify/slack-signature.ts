/**
 * Slack's request signature: `x-slack-signature` is `v0=` and the hex HMAC-SHA256, keyed by the
 * app's signing secret, of `v0:<x-slack-request-timestamp>:<raw body>`. A request whose
 * timestamp is more than five minutes from this server's clock is refused even when signed, so a
 * captured request cannot be replayed later.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { ErrorCodes, ReinError } from "@rein/core";

/** How far a request's timestamp may be from this server's clock (Slack's recommendation). */
export const SLACK_TIMESTAMP_WINDOW_S = 5 * 60;

/** Why a request was refused as not Slack's. */
export type SlackSignatureProblem = "missing" | "timestamp" | "signature";

/**
 * A request to the Slack interactivity endpoint is not proven to come from Slack: a header is
 * missing, its timestamp is outside the window (`details.reason: "timestamp"`), or the signature
 * does not match. Code `unauthorized` (HTTP 401); nothing was read from the body.
 */
export class SlackSignatureError extends ReinError {
  declare readonly details: { reason: SlackSignatureProblem };
  constructor(reason: SlackSignatureProblem) {
    super(
      ErrorCodes.UNAUTHORIZED,
      reason === "missing"
        ? "This endpoint only takes requests signed by Slack (x-slack-signature, x-slack-request-timestamp)."
        : reason === "timestamp"
          ? `The request's x-slack-request-timestamp is more than ${SLACK_TIMESTAMP_WINDOW_S} seconds from this server's clock: refused as a possible replay.`
          : "The x-slack-signature does not match this request: it was not signed with the configured signing secret.",
      { reason },
    );
  }
}

/** The signature Slack sends for `rawBody` at `timestamp` (also what tests sign with). */
export function slackSignature(signingSecret: string, timestamp: string, rawBody: string): string {
  return `v0=${createHmac("sha256", signingSecret).update(`v0:${timestamp}:${rawBody}`).digest("hex")}`;
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Checks a request's Slack signature, in constant time.
 *
 * @throws SlackSignatureError when a header is missing, the timestamp is out of the window, or
 *   the signature does not match.
 */
export function verifySlackRequest(
  signingSecret: string,
  headers: Record<string, string | string[] | undefined>,
  rawBody: string,
  nowMs: number = Date.now(),
): void {
  const timestamp = header(headers["x-slack-request-timestamp"]);
  const signature = header(headers["x-slack-signature"]);
  if (!timestamp || !signature) throw new SlackSignatureError("missing");
  const seconds = /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : NaN;
  if (!Number.isFinite(seconds) || Math.abs(nowMs / 1000 - seconds) > SLACK_TIMESTAMP_WINDOW_S)
    throw new SlackSignatureError("timestamp");
  const expected = Buffer.from(slackSignature(signingSecret, timestamp, rawBody));
  const given = Buffer.from(signature);
  // timingSafeEqual needs equal lengths; comparing with itself keeps the time the same.
  const same = given.length === expected.length;
  if (!timingSafeEqual(same ? given : expected, expected) || !same)
    throw new SlackSignatureError("signature");
}
