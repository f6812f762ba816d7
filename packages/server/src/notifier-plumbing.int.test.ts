/**
 * The notifier contract over a real server and store, on SQLite and Postgres: a `notify:<kind>`
 * subscription is delivered to the notifier of that kind (never over HTTP), with the event's
 * stable id and the attempt number; a notifier that throws is retried under the same id; one the
 * process lacks is a failed attempt in the delivery log; the subscription is made once however
 * many times processes ensure it.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Notifier, NotifierDelivery } from "./notify/notifier.ts";
import { ensureNotifySubscription } from "./notify/subscriptions.ts";
import {
  TOKENS,
  client,
  postgresBackend,
  sqliteBackend,
  startTestServer,
  type Backend,
  type TestServer,
  type TestStore,
} from "./testing/harness.ts";
import type { WebhookDeliverySettings } from "./webhooks/delivery.ts";
import { webhookBackendOf } from "./webhooks/store.ts";

const FAST: WebhookDeliverySettings = {
  pollMs: 30,
  batch: 50,
  concurrency: 4,
  timeoutMs: 1000,
  leaseMs: 3000,
  backoffMs: 50,
  maxBackoffMs: 100,
  maxAttempts: 3,
};

/** A notifier that records every call and fails its first `failures` calls. */
class Recorder implements Notifier {
  readonly calls: NotifierDelivery[] = [];
  constructor(
    readonly kind: string,
    private failures = 0,
  ) {}
  send(delivery: NotifierDelivery): Promise<void> {
    this.calls.push(delivery);
    if (this.failures-- > 0) return Promise.reject(new Error("chat service unavailable"));
    return Promise.resolve();
  }
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  await vi.waitFor(
    async () => {
      if (!(await check())) throw new Error(`timed out waiting for ${what}`);
    },
    { timeout: 10_000, interval: 20 },
  );
}

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`notifier plumbing on ${backend.name}`, () => {
    let store: TestStore;
    let server: TestServer;
    beforeEach(async () => {
      store = await backend.create();
    });
    afterEach(async () => {
      await server.close();
      await store.destroy();
    });

    it("delivers notify:<kind> to its notifier with a stable id, retrying a throw", async () => {
      const chat = new Recorder("chat", 1);
      const webhooks = webhookBackendOf(store.store)!.webhooks;
      const made = await Promise.all(
        [1, 2, 3].map(() => ensureNotifySubscription(webhooks, "chat", ["interrupt.pending"])),
      );
      expect(made.filter((m) => m === "created")).toHaveLength(1);
      expect(await ensureNotifySubscription(webhooks, "chat", ["interrupt.pending"])).toBe("kept");
      expect((await webhooks.listSubscriptions()).map((s) => [s.id, s.url, s.tenant])).toEqual([
        ["wh_notify_chat", "notify:chat", null],
      ]);
      server = await startTestServer(store.store, { webhookDelivery: FAST, notifiers: [chat] });
      const alice = client(server.url, TOKENS["alice"]!.token);
      await alice("POST", "/threads", { graph: "ask", threadId: "t-chat" });
      await alice("POST", "/threads/t-chat/runs", { input: { question: "Ship?" }, wait: true });
      await until(() => chat.calls.length === 2, "the retry");
      const [first, second] = chat.calls as [NotifierDelivery, NotifierDelivery];
      expect(first.id).toMatch(/^msg_/);
      expect([second.id, first.attempt, second.attempt]).toEqual([first.id, 1, 2]);
      expect(second.body).toMatchObject({
        type: "interrupt.pending",
        data: { threadId: "t-chat", payload: { question: "Ship?" }, approvers: null },
      });
      // The notifier returns before its attempt is recorded: read the log once it is.
      const log = async () =>
        (await webhooks.listDeliveries("wh_notify_chat", 10)).map((d) => [
          d.status,
          d.log.map((a) => a.error),
        ]);
      await expect
        .poll(log, { timeout: 10_000, interval: 50 })
        .toEqual([["delivered", ["chat service unavailable", null]]]);
    });

    it("a kind this process has no notifier for is a failed attempt, retried", async () => {
      const webhooks = webhookBackendOf(store.store)!.webhooks;
      await ensureNotifySubscription(webhooks, "sms", ["interrupt.pending"]);
      server = await startTestServer(store.store, { webhookDelivery: FAST });
      const alice = client(server.url, TOKENS["alice"]!.token);
      await alice("POST", "/threads", { graph: "ask", threadId: "t-sms" });
      await alice("POST", "/threads/t-sms/runs", { input: { question: "Ship?" }, wait: true });
      await until(
        async () => (await webhooks.listDeliveries("wh_notify_sms", 10))[0]?.status === "dead",
        "the dead letter",
      );
      const [dead] = await webhooks.listDeliveries("wh_notify_sms", 10);
      expect(dead!.log.map((a) => [a.statusCode, a.error])).toEqual(
        Array.from({ length: 3 }, () => [null, 'no "sms" notifier in this process']),
      );
    });

    it("changed events replace the subscription", async () => {
      const webhooks = webhookBackendOf(store.store)!.webhooks;
      await ensureNotifySubscription(webhooks, "chat", ["interrupt.pending"]);
      expect(
        await ensureNotifySubscription(webhooks, "chat", [
          "interrupt.pending",
          "interrupt.escalated",
        ]),
      ).toBe("replaced");
      expect((await webhooks.getSubscription("wh_notify_chat"))?.events).toEqual([
        "interrupt.pending",
        "interrupt.escalated",
      ]);
      server = await startTestServer(store.store, { webhookDelivery: false });
    });
  });
}

suite(sqliteBackend);
suite(await postgresBackend());
