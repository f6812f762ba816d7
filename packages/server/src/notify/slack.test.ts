/**
 * The pure parts of the Slack notifier: the request signature and its window, the message of a
 * question in each state, the button values, and the config section.
 */
import { describe, expect, it } from "vitest";
import { InvalidInputError } from "@rein/core";
import { parseSlackConfig } from "./slack-config.ts";
import { parseButtonValue, renderMessage, type QuestionView } from "./slack-message.ts";
import { SlackSignatureError, slackSignature, verifySlackRequest } from "./slack-signature.ts";

const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";

function signed(body: string, at: number, secret = SECRET) {
  const timestamp = String(at);
  return {
    "x-slack-request-timestamp": timestamp,
    "x-slack-signature": slackSignature(secret, timestamp, body),
  };
}

function reason(fn: () => void): string | null {
  try {
    fn();
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(SlackSignatureError);
    return (error as SlackSignatureError).details.reason;
  }
}

describe("Slack request signatures", () => {
  const now = 1_700_000_000_000;
  const body = "payload=%7B%22type%22%3A%22block_actions%22%7D";

  it("matches Slack's documented example (v0:timestamp:body, HMAC-SHA256, hex)", () => {
    // The example of Slack's "Verifying requests from Slack" guide.
    const example =
      "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
    expect(slackSignature(SECRET, "1531420618", example)).toBe(
      "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
    );
  });

  it("accepts a signed request within five minutes either way", () => {
    expect(reason(() => verifySlackRequest(SECRET, signed(body, now / 1000), body, now))).toBe(
      null,
    );
    const early = now / 1000 - 299;
    expect(reason(() => verifySlackRequest(SECRET, signed(body, early), body, now))).toBe(null);
    const late = now / 1000 + 299;
    expect(reason(() => verifySlackRequest(SECRET, signed(body, late), body, now))).toBe(null);
  });

  it("refuses an old or future timestamp, a malformed one, another secret, another body, no headers", () => {
    const old = now / 1000 - 301;
    expect(reason(() => verifySlackRequest(SECRET, signed(body, old), body, now))).toBe(
      "timestamp",
    );
    const future = now / 1000 + 301;
    expect(reason(() => verifySlackRequest(SECRET, signed(body, future), body, now))).toBe(
      "timestamp",
    );
    const headers = { ...signed(body, now / 1000), "x-slack-request-timestamp": "1e9" };
    expect(reason(() => verifySlackRequest(SECRET, headers, body, now))).toBe("timestamp");
    const other = signed(body, now / 1000, "another-signing-secret");
    expect(reason(() => verifySlackRequest(SECRET, other, body, now))).toBe("signature");
    expect(
      reason(() => verifySlackRequest(SECRET, signed(body, now / 1000), `${body}x`, now)),
    ).toBe("signature");
    const short = { ...signed(body, now / 1000), "x-slack-signature": "v0=00" };
    expect(reason(() => verifySlackRequest(SECRET, short, body, now))).toBe("signature");
    expect(reason(() => verifySlackRequest(SECRET, {}, body, now))).toBe("missing");
  });

  it("is a 401 `unauthorized` with the reason", () => {
    const error = new SlackSignatureError("timestamp");
    expect(error.code).toBe("unauthorized");
    expect(error.details).toEqual({ reason: "timestamp" });
  });
});

const question: QuestionView = {
  interruptId: "i_abc",
  threadId: "t-1",
  graph: "support",
  node: "tools",
  payload: {
    action: "send_email",
    args: { to: "a@b.c", body: "<b>hi</b> & bye" },
    allow: { accept: true, edit: true, respond: false, ignore: true },
  },
  digest: "sha256:ff",
  status: "pending",
  required: 1,
  approvals: [],
  actor: null,
  decision: null,
};

function actions(view: QuestionView, publicUrl?: string): string[] {
  const blocks = renderMessage(view, publicUrl).blocks as {
    type: string;
    elements?: { action_id: string }[];
  }[];
  return blocks.find((b) => b.type === "actions")?.elements?.map((e) => e.action_id) ?? [];
}

describe("Slack messages", () => {
  it("shows a tool call as its name and arguments, escaping Slack's control characters", () => {
    const text = JSON.stringify(renderMessage(question, undefined).blocks);
    expect(text).toContain("*Tool:* `send_email`");
    expect(text).toContain("&lt;b&gt;hi&lt;/b&gt; &amp; bye");
    expect(text).not.toContain("<b>");
  });

  it("offers Approve / Reject to decision payloads as `allow` permits, and Open only with a public URL", () => {
    expect(actions(question)).toEqual(["rein_approve", "rein_reject"]);
    expect(actions(question, "https://x")).toEqual(["rein_approve", "rein_reject", "rein_open"]);
    const noIgnore = { ...question, payload: { action: "x", args: {}, allow: { accept: true } } };
    expect(actions(noIgnore)).toEqual(["rein_approve"]);
    const noAllow = { ...question, payload: { action: "refund", amount: 5 } };
    expect(actions(noAllow)).toEqual(["rein_approve", "rein_reject"]);
    // A free-form question is answered in the console: Open only.
    expect(actions({ ...question, payload: "Ship it?" })).toEqual([]);
    expect(actions({ ...question, payload: { question: "Why?" } }, "https://x")).toEqual([
      "rein_open",
    ]);
  });

  it("drops the decision buttons once decided, and says who decided what", () => {
    const render = (view: Partial<QuestionView>) =>
      JSON.stringify(renderMessage({ ...question, ...view }, "https://x").blocks);
    const approved = { status: "answered", actor: "bob", decision: { type: "accept" } };
    expect(actions({ ...question, ...approved }, "https://x")).toEqual(["rein_open"]);
    expect(render(approved)).toContain("Approved by *bob*");
    expect(render({ status: "answered", actor: "bob", decision: { type: "ignore" } })).toContain(
      "Rejected by *bob*",
    );
    expect(render({ status: "expired", actor: "system:timer", decision: "no" })).toContain(
      'Expired: the default answer applied (`\\"no\\"`)',
    );
    expect(render({ status: "cancelled" })).toContain("Cancelled");
    expect(render({ required: 3, approvals: ["ann", "bo"] })).toContain("2 of 3: ann, bo");
    expect(render({ notice: "escalated" })).toContain("Escalated: approval needed");
  });

  it("button values round-trip; anything else is not a Rein button", () => {
    const blocks = renderMessage(question, undefined).blocks as {
      type: string;
      elements?: { value: string }[];
    }[];
    const value = blocks.find((b) => b.type === "actions")?.elements?.[0]?.value;
    expect(parseButtonValue(value)).toEqual({
      interruptId: "i_abc",
      decision: "approve",
      digest: "sha256:ff",
    });
    expect(parseButtonValue('{"i":"i_abc","d":"delete","h":"x"}')).toBeNull();
    expect(parseButtonValue("not json")).toBeNull();
    expect(parseButtonValue(42)).toBeNull();
  });
});

describe("the slack config section", () => {
  const valid = {
    botToken: "xoxb-1-2-3",
    signingSecret: SECRET,
    channel: "C0APPROVALS",
    people: [{ slackUserId: "U024BE7LH", subject: "ann", groups: ["finance"] }],
  };

  it("parses a valid section", () => {
    expect(parseSlackConfig(valid).people[0]?.subject).toBe("ann");
    expect(parseSlackConfig({ ...valid, people: undefined }).people).toEqual([]);
  });

  it("refuses unknown keys, a malformed user id and a user id mapped twice, never echoing secrets", () => {
    const bad = [
      { ...valid, extra: true },
      { ...valid, people: [{ slackUserId: "ann", subject: "ann" }] },
      { ...valid, people: [valid.people[0], { ...valid.people[0], subject: "bo" }] },
      { ...valid, signingSecret: "x" },
    ];
    for (const raw of bad) {
      const error = (() => {
        try {
          parseSlackConfig(raw);
          return null;
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(String((error as Error).message)).not.toContain(SECRET);
      expect(String((error as Error).message)).not.toContain("xoxb-1-2-3");
    }
  });
});
