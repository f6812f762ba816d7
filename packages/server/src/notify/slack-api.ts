/**
 * The few Slack Web API calls the notifier makes (`chat.postMessage`, `chat.update`) and the
 * `response_url` replies of the interactivity endpoint, over `fetch`. No Slack SDK: two JSON
 * POSTs with a bearer token do not justify a dependency, and a plain `fetch` keeps the retry
 * policy where it belongs — in the webhook outbox, which retries whatever throws here.
 */

/** How long one Slack call may take before it counts as failed (and is retried). */
const CALL_TIMEOUT_MS = 10_000;

/**
 * Slack refused or failed a call: `ok: false` (`error` says why, e.g. `channel_not_found`),
 * HTTP 429 (`retryAfterS` from `Retry-After`) or a 5xx. The outbox retries it; a permanent
 * error dead-letters after the last attempt, with this message in the delivery log.
 */
export class SlackApiError extends Error {
  /** Slack's `error` (`channel_not_found`, `ratelimited`, `http_503`, …). */
  readonly slackError: string;
  /** Seconds Slack asked to wait (HTTP 429), when it said. */
  readonly retryAfterS: number | null;
  constructor(method: string, slackError: string, retryAfterS: number | null = null) {
    super(
      `Slack ${method} failed: ${slackError}${retryAfterS !== null ? ` (retry after ${retryAfterS}s)` : ""}${
        PERMANENT.has(slackError)
          ? " — this will not pass by retrying: fix the Slack configuration (token, scopes, channel)."
          : ""
      }`,
    );
    this.name = "SlackApiError";
    this.slackError = slackError;
    this.retryAfterS = retryAfterS;
  }
}

/** Errors that mean the configuration is wrong, not that Slack is busy. */
const PERMANENT = new Set([
  "channel_not_found",
  "not_in_channel",
  "is_archived",
  "invalid_auth",
  "not_authed",
  "account_inactive",
  "token_revoked",
  "missing_scope",
  "message_not_found",
  "cant_update_message",
]);

/** A Slack message as Rein sends it: fallback text and Block Kit blocks. */
export interface SlackMessage {
  text: string;
  blocks: unknown[];
}

/** What `chat.postMessage` answers (the fields Rein keeps). */
export interface PostedMessage {
  channel: string;
  ts: string;
}

/** A Web API client bound to one bot token. */
export class SlackApi {
  readonly #apiUrl: string;
  readonly #token: string;

  constructor(apiUrl: string, botToken: string) {
    this.#apiUrl = apiUrl.replace(/\/+$/, "");
    this.#token = botToken;
  }

  /**
   * Posts a message (`chat.postMessage`).
   *
   * @throws SlackApiError when Slack refuses or fails.
   */
  async postMessage(channel: string, message: SlackMessage): Promise<PostedMessage> {
    const answer = await this.#call("chat.postMessage", { channel, ...message });
    const posted = { channel: answer["channel"], ts: answer["ts"] };
    if (typeof posted.channel !== "string" || typeof posted.ts !== "string")
      throw new SlackApiError("chat.postMessage", "response_without_channel_or_ts");
    return { channel: posted.channel, ts: posted.ts };
  }

  /**
   * Replaces a message (`chat.update`).
   *
   * @throws SlackApiError when Slack refuses or fails.
   */
  async update(channel: string, ts: string, message: SlackMessage): Promise<void> {
    await this.#call("chat.update", { channel, ts, ...message });
  }

  async #call(method: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const response = await post(`${this.#apiUrl}/${method}`, body, {
      authorization: `Bearer ${this.#token}`,
    }).catch((error: unknown) => {
      throw new SlackApiError(method, `unreachable: ${String(error)}`);
    });
    if (response.status === 429) {
      const after = Number(response.headers.get("retry-after"));
      throw new SlackApiError(method, "ratelimited", Number.isFinite(after) ? after : null);
    }
    if (response.status >= 300) throw new SlackApiError(method, `http_${response.status}`);
    const answer = (await response.json().catch(() => null)) as Record<string, unknown> | null;
    if (answer === null || typeof answer !== "object")
      throw new SlackApiError(method, "response_not_json");
    if (answer["ok"] !== true)
      throw new SlackApiError(
        method,
        typeof answer["error"] === "string" ? answer["error"] : "not_ok",
      );
    return answer;
  }
}

/**
 * Answers an interaction through its `response_url` (no token: the URL is the credential, valid
 * for 30 minutes and five uses). Failures are the caller's to log: the decision, if any, stands.
 *
 * @throws SlackApiError when Slack refuses or fails.
 */
export async function respond(responseUrl: string, body: Record<string, unknown>): Promise<void> {
  const response = await post(responseUrl, body, {});
  if (response.status >= 300) throw new SlackApiError("response_url", `http_${response.status}`);
}

function post(url: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
  });
}
