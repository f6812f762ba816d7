/**
 * Both notifiers from one config file, across real processes: `rein serve --notify FILE` with an
 * `email` and a `slack` section sets up both through the webhook outbox. A refund that needs two
 * approvers from finance is posted to a local stub of Slack's Web API and mailed to the approvers
 * (a local SMTP server); one approval comes as a signed Slack click, the second from an email's
 * decision link, and the run goes on once both are in — one policy, whichever channel answers.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { slackSignature } from "./notify/slack-signature.ts";
import { acmePerson } from "./testing/people.ts";
import { client } from "./testing/harness.ts";
import { launchRein, type Proc } from "./testing/processes.ts";
import { SlackStub, type SlackCall } from "./testing/slack-stub.ts";
import { TestSmtp, freePort, linksOf } from "./testing/smtp.ts";

const GRAPHS = join(import.meta.dirname, "testing/governed-graphs.ts");
const LINK_SECRET = "channels-link-secret-0123456789abcdef";
const SIGNING_SECRET = "channels-signing-secret-0123456789";

/** Carol starts the refunds; alice (on Slack) and bob (by email) approve for finance. */
const PEOPLE = {
  alice: acmePerson("alice", ["finance"]),
  bob: acmePerson("bob", ["finance"]),
  carol: acmePerson("carol", ["finance"]),
};

type Button = { action_id: string; value?: string };

function buttonsOf(call: SlackCall): Button[] {
  const blocks = (call.body["blocks"] ?? []) as { type: string; elements?: Button[] }[];
  return blocks.find((b) => b.type === "actions")?.elements ?? [];
}

describe("email and Slack from one notifier config", { timeout: 90_000 }, () => {
  let dir: string;
  let smtp: TestSmtp;
  let slack: SlackStub;
  let server: Proc;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "rein-channels-"));
    [smtp, slack] = await Promise.all([TestSmtp.start(), SlackStub.start()]);
    const port = await freePort();
    writeFileSync(join(dir, "tokens.json"), JSON.stringify({ tokens: Object.values(PEOPLE) }));
    writeFileSync(
      join(dir, "notify.json"),
      JSON.stringify({
        publicUrl: `http://127.0.0.1:${port}`,
        people: [
          { subject: "bob@acme", tenant: "acme", groups: ["finance"], email: "bob@mail.test" },
        ],
        email: { smtp: smtp.url, from: "Rein <rein@mail.test>" },
        slack: {
          botToken: "xoxb-channels-token",
          signingSecret: SIGNING_SECRET,
          channel: "C0APPROVALS",
          apiUrl: slack.apiUrl,
          people: [{ slackUserId: "U0ALICE", subject: "alice@acme", groups: ["finance"] }],
        },
      }),
    );
    server = await launchRein(
      [
        "serve",
        ...["--db", join(dir, "rein.db"), "--graphs", GRAPHS],
        ...["--tokens", join(dir, "tokens.json"), "--notify", join(dir, "notify.json")],
        ...["--port", String(port), "--log-level", "silent"],
      ],
      /listening on (\S+)/,
      { REIN_LINK_SECRET: LINK_SECRET, REIN_WEBHOOK_POLL_MS: "50" },
    );
    url = server.url ?? "";
  }, 60_000);

  afterAll(async () => {
    server?.child.kill("SIGKILL");
    await smtp?.down();
    await slack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("one approval from a Slack click, the second from an email link: applied once both are in", async () => {
    const carol = client(url, PEOPLE.carol.token);
    await carol("POST", "/threads", { graph: "governed", threadId: "both" });
    const started = await carol<{ status: string; interrupts: { id: string }[] }>(
      "POST",
      "/threads/both/runs",
      { input: { amount: 4000 }, wait: true },
    );
    expect(started.body.status).toBe("interrupted");
    const interruptId = started.body.interrupts[0]!.id;

    // Both channels hear of it through the outbox.
    const [message] = await slack.waitFor("chat.postMessage", 1, 15_000);
    const [mail] = await smtp.waitFor(1, (m) => m.to.includes("bob@mail.test"));
    const approve = buttonsOf(message!).find((b) => b.action_id === "rein_approve");
    expect(approve?.value).toContain(interruptId);
    const link = linksOf(mail!).approve;
    expect(link).toBeDefined();

    const pendingOf = async () =>
      (
        await carol<{ items: { approval: { approvals: { actor: string }[] } | null }[] }>(
          "GET",
          "/interrupts?threadId=both&status=pending",
        )
      ).body.items;
    // Alice approves in Slack: 1 of 2, still pending.
    const payload = {
      type: "block_actions",
      user: { id: "U0ALICE", username: "alice", team_id: "T0001" },
      container: { type: "message", message_ts: String(message!.answer?.["ts"]) },
      channel: { id: "C0APPROVALS", name: "approvals" },
      response_url: slack.responseUrl("alice"),
      actions: [{ type: "button", action_id: approve!.action_id, value: approve!.value }],
    };
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const timestamp = String(Math.floor(Date.now() / 1000));
    const clicked = await fetch(`${url}/slack/interactivity`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-slack-request-timestamp": timestamp,
        "x-slack-signature": slackSignature(SIGNING_SECRET, timestamp, body),
      },
      body,
    });
    expect(clicked.status).toBe(200);
    // The 200 comes once the approval is stored: a crash after it loses no click.
    expect((await pendingOf())[0]?.approval?.approvals.map((a) => a.actor)).toEqual(["alice@acme"]);
    await expect
      .poll(async () => (await pendingOf())[0]?.approval?.approvals.map((a) => a.actor))
      .toEqual(["alice@acme"]);

    // Bob approves from his email: the second approval applies the refund and the run goes on.
    const applied = await fetch(link!, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "",
    });
    expect(applied.status).toBe(200);
    await expect
      .poll(async () => (await carol<{ status: string }>("GET", "/threads/both")).body.status, {
        timeout: 10_000,
      })
      .toBe("done");
    expect(await pendingOf()).toEqual([]);
    // The Slack message is updated to say who decided, without buttons (after an update that
    // showed alice's approval, "1 of 2", with them).
    const decided = () =>
      slack
        .of("chat.update")
        .find((u) => buttonsOf(u).every((b) => b.action_id !== "rein_approve"));
    await expect.poll(decided, { timeout: 10_000 }).toBeDefined();
    expect(JSON.stringify(decided()!.body)).toContain("bob@acme");
  });
});
