/**
 * Slack over real HTTP, on SQLite and on Postgres, against a local stub of Slack's Web API: a
 * pending question (a real run's `interrupt.pending` event, as the outbox delivers it) is posted
 * once with Approve / Reject / Open; Slack failing is retried; signed clicks apply as the mapped
 * person under the question's approval policy (four eyes, 2 of finance), and refused clicks —
 * bad signature, old timestamp, unmapped user, policy, stale or changed button — change nothing.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { payloadDigest, type InterruptId } from "@rein/core";
import type { NotifierDelivery } from "./notify/notifier.ts";
import type { SlackOptions } from "./notify/slack-config.ts";
import { createSlackNotifier } from "./notify/slack.ts";
import { slackSignature } from "./notify/slack-signature.ts";
import type { WebhookBody } from "./webhooks/payload.ts";
import { ask } from "./testing/graphs.ts";
import { graphs as governedGraphs } from "./testing/governed-graphs.ts";
import {
  TOKENS,
  client,
  postgresBackend,
  serveOn,
  snapshotStore,
  sqliteBackend,
  startTestServer,
  type Backend,
} from "./testing/harness.ts";
import { TestReceiver } from "./testing/receiver.ts";
import { SlackStub, type SlackCall } from "./testing/slack-stub.ts";

const pg = await postgresBackend();
const graphs = { ...governedGraphs, ask };
const backends: Backend[] = [sqliteBackend, pg];

const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const PUBLIC_URL = "https://rein.example.com/console";
/** The people of the tests: alice@acme starts the runs (the requester). */
const PEOPLE: SlackOptions["people"] = [
  { slackUserId: "U0ALICE", subject: "alice@acme", groups: ["finance"] },
  { slackUserId: "U0CAROL", subject: "carol", groups: ["finance"], tenant: "acme" },
  { slackUserId: "U0DAN", subject: "dan", groups: ["finance"] },
  { slackUserId: "U0EVE", subject: "eve", groups: ["support"] },
  { slackUserId: "U0GLOBEX", subject: "gus@globex", groups: ["finance"], tenant: "globex" },
];

type Json = Record<string, unknown>;
type Button = { action_id: string; value?: string; url?: string; text: { text: string } };

function buttonsOf(call: SlackCall | undefined): Button[] {
  const blocks = (call?.body["blocks"] ?? []) as { type: string; elements?: Button[] }[];
  return blocks.find((b) => b.type === "actions")?.elements ?? [];
}

for (const backend of backends) {
  describe.skipIf(!backend.available)(`Slack on ${backend.name}`, () => {
    let receiver: TestReceiver;
    let slack: SlackStub;
    let options: SlackOptions;

    beforeEach(async () => {
      receiver = await TestReceiver.start();
      slack = await SlackStub.start();
      options = {
        botToken: "xoxb-test-token-1",
        signingSecret: SECRET,
        channel: "C0APPROVALS",
        apiUrl: slack.apiUrl,
        publicUrl: PUBLIC_URL,
        people: PEOPLE,
      };
    });
    afterEach(async () => {
      await receiver.close();
      await slack.close();
    });
    // After the receiver and the stub: the server's options point at them.
    const served = serveOn(backend, () => ({
      graphs,
      slack: options,
      webhookDelivery: { ...FAST },
    }));
    const alice = () => client(served.url, TOKENS["alice"]!.token);

    beforeEach(async () => {
      const admin = client(served.url, TOKENS["admin"]!.token);
      const subscribed = await admin("POST", "/webhooks", {
        url: receiver.url,
        events: ["interrupt.pending", "interrupt.answered", "interrupt.expired"],
      });
      expect(subscribed.status).toBe(201);
    });

    const notifier = () => createSlackNotifier({ ...options, store: served.store });

    /** A refund run as alice, paused on its question; and the outbox's pending event. */
    async function pending(amount: number) {
      const created = await alice()<{ threadId: string }>("POST", "/threads", {
        graph: "governed",
      });
      const threadId = created.body.threadId;
      const run = await alice()<{ status: string; interrupts: { id: string; payload: unknown }[] }>(
        "POST",
        `/threads/${threadId}/runs`,
        { input: { amount }, wait: true },
      );
      expect(run.body.status).toBe("interrupted");
      const interrupt = run.body.interrupts[0]!;
      const event = await eventOf("interrupt.pending", interrupt.id);
      return { threadId, interruptId: interrupt.id, payload: interrupt.payload, event };
    }

    /** The outbox's event of `type` for a question, as a notifier delivery. */
    async function eventOf(type: string, interruptId: string): Promise<NotifierDelivery> {
      const find = () =>
        receiver.received.find((h) => h.type === type && h.data["interruptId"] === interruptId);
      await receiver.waitFor(() => find() !== undefined, 10_000, type);
      const hook = find()!;
      return { id: hook.id, attempt: 1, body: JSON.parse(hook.body) as WebhookBody };
    }

    /** A click as Slack sends it: form-encoded `payload`, signed with the signing secret. */
    async function click(
      userId: string,
      button: Button,
      posted: SlackCall,
      sign: { secret?: string; at?: number } = {},
    ) {
      const payload = {
        type: "block_actions",
        user: { id: userId, username: userId.toLowerCase(), team_id: "T0001" },
        api_app_id: "A0REIN",
        team: { id: "T0001", domain: "acme" },
        container: {
          type: "message",
          message_ts: String(posted.answer?.["ts"]),
          channel_id: "C0APPROVALS",
          is_ephemeral: false,
        },
        trigger_id: "13345224609.738474920.8088930838d88f008e0",
        channel: { id: "C0APPROVALS", name: "approvals" },
        response_url: slack.responseUrl(`${userId}-${slack.calls.length}`),
        actions: [
          {
            type: "button",
            action_id: button.action_id,
            block_id: "rein",
            text: { type: "plain_text", text: button.text.text },
            value: button.value,
            action_ts: "1700000002.000200",
          },
        ],
      };
      const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
      const timestamp = String(Math.floor((sign.at ?? Date.now()) / 1000));
      const response = await fetch(`${served.url}/slack/interactivity`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "x-slack-request-timestamp": timestamp,
          "x-slack-signature": slackSignature(sign.secret ?? SECRET, timestamp, body),
        },
        body,
      });
      const text = await response.text();
      return { status: response.status, body: (text ? JSON.parse(text) : null) as Json | null };
    }

    /** Posts a question through the notifier and returns the message and its buttons. */
    async function posted(amount: number) {
      const question = await pending(amount);
      await notifier().send(question.event);
      const [message] = await slack.waitFor("chat.postMessage");
      const buttons = buttonsOf(message);
      const button = (id: string) => buttons.find((b) => b.action_id === id)!;
      return {
        ...question,
        message: message!,
        approve: button("rein_approve"),
        reject: button("rein_reject"),
      };
    }

    async function interruptRow(id: string) {
      const [row] = await served.store.getInterrupts([id as InterruptId]);
      return row!;
    }

    /** The thread's status once it is `want` (polled every 20 ms for up to 10 s). */
    function threadStatus(threadId: string, want: string): Promise<string> {
      return vi.waitFor(
        async () => {
          const thread = await alice()<{ status: string }>("GET", `/threads/${threadId}`);
          if (thread.body.status !== want)
            throw new Error(`thread ${threadId} is ${thread.body.status}, not ${want}`);
          return thread.body.status;
        },
        { timeout: 10_000, interval: 20 },
      );
    }

    it("a pending question is posted once, with Approve, Reject and Open carrying its id and digest", async () => {
      const { threadId, interruptId, payload, event } = await pending(500);
      await notifier().send(event);
      // At least once: the same event again (a retry, another process) posts nothing more.
      await notifier().send({ ...event, attempt: 2 });
      const posts = slack.of("chat.postMessage");
      expect(posts).toHaveLength(1);
      const post = posts[0]!;
      expect(post.authorization).toBe("Bearer xoxb-test-token-1");
      expect(post.body["channel"]).toBe("C0APPROVALS");
      expect(post.body["text"]).toContain("governed");
      expect(JSON.stringify(post.body["blocks"])).toContain("*Tool:* `refund`");
      expect(JSON.stringify(post.body["blocks"])).toContain('\\"amount\\": 500');
      const buttons = buttonsOf(post);
      expect(buttons.map((b) => b.action_id)).toEqual(["rein_approve", "rein_reject", "rein_open"]);
      const digest = payloadDigest(payload);
      expect(JSON.parse(buttons[0]!.value!)).toEqual({ i: interruptId, d: "approve", h: digest });
      expect(JSON.parse(buttons[1]!.value!)).toEqual({ i: interruptId, d: "reject", h: digest });
      expect(buttons[2]!.url).toBe(`${PUBLIC_URL}/#/threads/${threadId}/interrupts/${interruptId}`);
    });

    it("a pending event delivered after the question was answered posts its final state, without decision buttons", async () => {
      const { threadId, event } = await pending(500);
      const resumed = await alice()("POST", `/threads/${threadId}/resume`, {
        resume: { type: "accept" },
      });
      expect(resumed.status).toBe(200);
      await notifier().send(event);
      const [post] = await slack.waitFor("chat.postMessage");
      expect(JSON.stringify(post!.body["blocks"])).toContain("Approved by *alice@acme*");
      expect(buttonsOf(post).map((b) => b.action_id)).toEqual(["rein_open"]);
    });

    it("without Slack configured there is no interactivity endpoint", async () => {
      const plain = await startTestServer(served.store, { graphs, webhookDelivery: false });
      try {
        const response = await fetch(`${plain.url}/slack/interactivity`, {
          method: "POST",
          body: "payload=%7B%7D",
          headers: { "content-type": "application/x-www-form-urlencoded" },
        });
        expect(response.status).toBe(404);
      } finally {
        await plain.close();
      }
    });

    it("Slack answering 500, 429 and ok:false makes send throw (the outbox retries); then it posts once", async () => {
      const { event } = await pending(500);
      slack.failures.push(
        { status: 500 },
        { status: 429, retryAfter: 7 },
        { error: "channel_not_found" },
      );
      const slackNotifier = notifier();
      await expect(slackNotifier.send(event)).rejects.toThrow(/chat\.postMessage failed: http_500/);
      await expect(slackNotifier.send(event)).rejects.toThrow(/ratelimited \(retry after 7s\)/);
      await expect(slackNotifier.send(event)).rejects.toThrow(
        /channel_not_found — this will not pass by retrying/,
      );
      await slackNotifier.send(event);
      await slackNotifier.send(event);
      expect(slack.of("chat.postMessage")).toHaveLength(4);
      expect(
        slack.calls.filter((c) => c.method === "chat.postMessage").at(-1)?.body["channel"],
      ).toBe("C0APPROVALS");
    });

    it("a signed Approve by a mapped user: 200, the run continues, the message shows who decided without buttons", async () => {
      const { threadId, interruptId, approve, message } = await posted(500);
      const reply = await click("U0DAN", approve, message);
      expect(reply.status).toBe(200);
      const [update] = await slack.waitFor("chat.update");
      expect(update!.body["channel"]).toBe("C0APPROVALS");
      expect(update!.body["ts"]).toBe(message.answer?.["ts"]);
      expect(JSON.stringify(update!.body["blocks"])).toContain("Approved by *dan*");
      expect(buttonsOf(update).map((b) => b.action_id)).toEqual(["rein_open"]);
      const row = await interruptRow(interruptId);
      expect(row.status).toBe("answered");
      expect(row.answeredBy).toBe("dan");
      expect(await threadStatus(threadId, "done")).toBe("done");
      const state = await alice()<{ values: Json }>("GET", `/threads/${threadId}/state`);
      expect(state.body.values["outcome"]).toBe("refunded 500");
      // The outbox's `interrupt.answered` updates the same message (the same text again).
      await notifier().send(await eventOf("interrupt.answered", interruptId));
      const updates = await slack.waitFor("chat.update", 2);
      expect(updates[1]!.body["ts"]).toBe(message.answer?.["ts"]);
      expect(JSON.stringify(updates[1]!.body["blocks"])).toContain("Approved by *dan*");
      // A click on the old message now applies nothing and says why.
      await click("U0CAROL", approve, message);
      const [said] = await slack.waitFor("response_url");
      expect(said!.body).toMatchObject({ response_type: "ephemeral", replace_original: false });
      expect(String(said!.body["text"])).toContain("already answered (by dan)");
    });

    it("an escalation posts another message; the answer updates every message of the question", async () => {
      const { interruptId, event, approve, message } = await posted(500);
      const escalated: NotifierDelivery = {
        id: `${event.id}-escalated`,
        attempt: 1,
        body: { ...event.body, type: "interrupt.escalated" },
      };
      await notifier().send(escalated);
      await notifier().send(escalated);
      const posts = slack.of("chat.postMessage");
      expect(posts).toHaveLength(2);
      expect(JSON.stringify(posts[1]!.body["blocks"])).toContain("Escalated: approval needed");
      expect(buttonsOf(posts[1]).map((b) => b.action_id)).toContain("rein_approve");
      await click("U0DAN", approve, message);
      await slack.waitFor("chat.update");
      await notifier().send(await eventOf("interrupt.answered", interruptId));
      const updates = await slack.waitFor("chat.update", 3);
      const updated = updates.slice(1).map((u) => u.body["ts"]);
      expect(updated).toEqual(posts.map((p) => p.answer?.["ts"]));
      for (const update of updates.slice(1))
        expect(buttonsOf(update).map((b) => b.action_id)).toEqual(["rein_open"]);
    });

    it("a free-form question gets Open only; when its deadline passes the message says it expired", async () => {
      await alice()("POST", "/threads", { graph: "ask", threadId: "t-ask" });
      const run = await alice()<{ interrupts: { id: string }[] }>("POST", "/threads/t-ask/runs", {
        input: { timeoutMs: 600 },
        wait: true,
      });
      const interruptId = run.body.interrupts[0]!.id;
      await notifier().send(await eventOf("interrupt.pending", interruptId));
      const [post] = await slack.waitFor("chat.postMessage");
      expect(buttonsOf(post).map((b) => b.action_id)).toEqual(["rein_open"]);
      expect(JSON.stringify(post!.body["blocks"])).toContain("Proceed?");
      await notifier().send(await eventOf("interrupt.expired", interruptId));
      const [update] = await slack.waitFor("chat.update");
      expect(update!.body["ts"]).toBe(post!.answer?.["ts"]);
      expect(JSON.stringify(update!.body["blocks"])).toContain(
        "Expired: the default answer applied",
      );
      expect(JSON.stringify(update!.body["blocks"])).toContain("timed out");
    });

    it("Reject answers ignore: the run ends without the refund", async () => {
      const { threadId, reject, message } = await posted(500);
      expect((await click("U0EVE", reject, message)).status).toBe(200);
      const [update] = await slack.waitFor("chat.update");
      expect(JSON.stringify(update!.body["blocks"])).toContain("Rejected by *eve*");
      expect(await threadStatus(threadId, "done")).toBe("done");
      const state = await alice()<{ values: Json }>("GET", `/threads/${threadId}/state`);
      expect(state.body.values["outcome"]).toBe("ignore");
    });

    it("a bad signature, another secret, an old timestamp or no signature: 401 JSON, nothing changed", async () => {
      const { interruptId, approve, message } = await posted(500);
      const before = await snapshotStore(served.store);
      const forged = await click("U0DAN", approve, message, { secret: "not-the-signing-secret" });
      expect(forged.status).toBe(401);
      expect(forged.body).toMatchObject({
        error: "unauthorized",
        details: { reason: "signature" },
      });
      const replayed = await click("U0DAN", approve, message, { at: Date.now() - 6 * 60_000 });
      expect(replayed.status).toBe(401);
      expect(replayed.body).toMatchObject({
        error: "unauthorized",
        details: { reason: "timestamp" },
      });
      const unsigned = await fetch(`${served.url}/slack/interactivity`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "payload=%7B%7D",
      });
      expect(unsigned.status).toBe(401);
      expect(await unsigned.json()).toMatchObject({ details: { reason: "missing" } });
      // Signed over other bytes than those sent (a tampered body).
      const timestamp = String(Math.floor(Date.now() / 1000));
      const tampered = await fetch(`${served.url}/slack/interactivity`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "x-slack-request-timestamp": timestamp,
          "x-slack-signature": slackSignature(SECRET, timestamp, "payload=%7B%7D"),
        },
        body: "payload=%7B%22type%22%3A%22block_actions%22%7D",
      });
      expect(tampered.status).toBe(401);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await snapshotStore(served.store)).toBe(before);
      expect((await interruptRow(interruptId)).status).toBe("pending");
      expect(slack.of("chat.update")).toHaveLength(0);
      expect(slack.of("response_url")).toHaveLength(0);
    });

    it("an unmapped Slack user: told so, nothing applied", async () => {
      const { interruptId, approve, message } = await posted(500);
      const before = await snapshotStore(served.store);
      expect((await click("U0STRANGER", approve, message)).status).toBe(200);
      const [said] = await slack.waitFor("response_url");
      expect(said!.body["response_type"]).toBe("ephemeral");
      expect(String(said!.body["text"])).toContain("not mapped to a Rein principal");
      expect(await snapshotStore(served.store)).toBe(before);
      expect((await interruptRow(interruptId)).status).toBe("pending");
      expect(slack.of("chat.update")).toHaveLength(0);
    });

    it("a person bound to another tenant cannot answer this tenant's question", async () => {
      const { interruptId, approve, message } = await posted(500);
      const before = await snapshotStore(served.store);
      expect((await click("U0GLOBEX", approve, message)).status).toBe(200);
      const [said] = await slack.waitFor("response_url");
      expect(String(said!.body["text"])).toContain("no longer exists");
      expect(await snapshotStore(served.store)).toBe(before);
      expect((await interruptRow(interruptId)).status).toBe("pending");
    });

    it("the OpenAPI document lists the interactivity endpoint, without a token", async () => {
      const doc = await client(served.url, null)<{ paths: Record<string, Json> }>(
        "GET",
        "/openapi.json",
      );
      const operation = doc.body.paths["/slack/interactivity"]?.["post"] as Json | undefined;
      expect(operation?.["operationId"]).toBe("slackInteractivity");
      expect(operation?.["security"] ?? []).toEqual([]);
    });

    it("a button whose digest is not the question's: refused as changed, nothing applied", async () => {
      const { interruptId, approve, message } = await posted(500);
      const before = await snapshotStore(served.store);
      const old = {
        ...approve,
        value: JSON.stringify({ i: interruptId, d: "approve", h: "sha256:00" }),
      };
      expect((await click("U0DAN", old, message)).status).toBe(200);
      const [said] = await slack.waitFor("response_url");
      expect(String(said!.body["text"])).toContain("changed since the message was posted");
      expect(await snapshotStore(served.store)).toBe(before);
    });

    it("over $1,000: support and the requester are not allowed (told why), carol makes it 1 of 2, dan applies it", async () => {
      const { threadId, interruptId, approve, message } = await posted(5000);
      const before = await snapshotStore(served.store);
      await click("U0EVE", approve, message);
      await click("U0ALICE", approve, message);
      const said = await slack.waitFor("response_url", 2);
      const texts = said.map((s) => String(s.body["text"])).sort();
      expect(texts[0]).toMatch(/^Not allowed: Only group finance may answer/);
      expect(texts[1]).toMatch(/^Not allowed: The person who started this run may not approve it/);
      expect(await snapshotStore(served.store)).toBe(before);
      expect(slack.of("chat.update")).toHaveLength(0);

      await click("U0CAROL", approve, message);
      const [partial] = await slack.waitFor("chat.update");
      expect(JSON.stringify(partial!.body["blocks"])).toContain("1 of 2: carol");
      // Still pending: the buttons stay for the second approver.
      expect(buttonsOf(partial).map((b) => b.action_id)).toEqual([
        "rein_approve",
        "rein_reject",
        "rein_open",
      ]);
      expect((await slack.waitFor("response_url", 3))[2]!.body["text"]).toContain(
        "approval is recorded",
      );
      expect((await interruptRow(interruptId)).status).toBe("pending");
      expect(await threadStatus(threadId, "interrupted")).toBe("interrupted");
      // Carol again counts once.
      await click("U0CAROL", approve, message);
      expect(String((await slack.waitFor("response_url", 4))[3]!.body["text"])).toContain(
        "You approved this already",
      );

      await click("U0DAN", approve, message);
      const updates = await slack.waitFor("chat.update", 2);
      expect(JSON.stringify(updates[1]!.body["blocks"])).toContain("Approved by *carol*, *dan*");
      expect(await threadStatus(threadId, "done")).toBe("done");
      const row = await interruptRow(interruptId);
      expect(row.approvals?.approvals.map((a) => a.actor)).toEqual(["carol", "dan"]);
      const audit = await alice()<{ items: { action: string; actor: string }[] }>(
        "GET",
        `/audit?threadId=${threadId}`,
      );
      expect(audit.body.items.map((a) => `${a.action}:${a.actor}`)).toEqual([
        "approval:carol",
        "answer:dan",
      ]);
    });
  });
}

/** Fast outbox pacing for tests. */
const FAST = {
  pollMs: 50,
  batch: 100,
  concurrency: 16,
  timeoutMs: 1000,
  leaseMs: 3000,
  backoffMs: 100,
  maxBackoffMs: 800,
  maxAttempts: 50,
};
