/**
 * Webhooks over real HTTP, on SQLite and on Postgres: subscriptions per tenant, events of a real
 * run delivered to a local receiver and verified with `standardwebhooks`, rotation, a receiver
 * that is down and comes back, dead letters, a slow receiver that never delays a run, and 1,000
 * events against a receiver that fails 30% of the time.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Webhook } from "standardwebhooks";
import { PostgresSaver } from "@rein/postgres";
import { SqliteSaver } from "@rein/sqlite";
import {
  makeCheckpoint,
  makeCommit,
  makeInterrupt,
  makeOutcome,
  makeThread,
  pausedResult,
  taskId,
  checkpointId,
} from "@rein/core/testing";
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
import { TestReceiver, type ReceivedHook } from "./testing/receiver.ts";
import type { WebhookDeliverySettings } from "./webhooks/delivery.ts";

type Json = Record<string, unknown>;
type Created = { id: string; secret: string; url: string; tenant: string | null };
type Delivery = {
  eventId: string;
  status: string;
  attempts: number;
  nextAttemptAt: string | null;
  log: { attempt: number; statusCode: number | null; error: string | null }[];
};

/** Fast pacing for tests: retries within a second. */
const FAST: WebhookDeliverySettings = {
  pollMs: 50,
  batch: 100,
  concurrency: 16,
  timeoutMs: 1000,
  leaseMs: 3000,
  backoffMs: 100,
  maxBackoffMs: 800,
  maxAttempts: 50,
};

function verify(secret: string, hook: ReceivedHook): unknown {
  return new Webhook(secret).verify(hook.body, {
    "webhook-id": hook.id,
    "webhook-timestamp": hook.timestamp,
    "webhook-signature": hook.signature,
  });
}

/** The events the outbox holds, read from the store's own table. */
async function outboxEvents(store: TestStore["store"]): Promise<number> {
  if (store instanceof SqliteSaver)
    return Number(
      (store.db.prepare("SELECT count(*) AS n FROM webhook_events").get() as { n: number }).n,
    );
  if (store instanceof PostgresSaver)
    return (
      await store.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${store.schema}.webhook_events`,
      )
    ).rows[0]!.n;
  throw new Error("a store without an outbox table");
}

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`webhooks on ${backend.name}`, () => {
    let store: TestStore;
    let server: TestServer;
    let receiver: TestReceiver;
    const alice = (): ReturnType<typeof client> => client(server.url, TOKENS["alice"]!.token);
    const admin = (): ReturnType<typeof client> => client(server.url, TOKENS["admin"]!.token);
    const bob = (): ReturnType<typeof client> => client(server.url, TOKENS["bob"]!.token);

    async function start(settings: Partial<WebhookDeliverySettings> = {}): Promise<void> {
      server = await startTestServer(store.store, { webhookDelivery: { ...FAST, ...settings } });
    }

    async function subscribe(body: Json, as = admin()): Promise<Created> {
      const created = await as<Created>("POST", "/webhooks", { url: receiver.url, ...body });
      expect(created.status).toBe(201);
      return created.body;
    }

    async function deliveries(id: string): Promise<Delivery[]> {
      return (await admin()<{ items: Delivery[] }>("GET", `/webhooks/${id}/deliveries`)).body.items;
    }

    beforeEach(async () => {
      store = await backend.create();
      receiver = await TestReceiver.start();
    });
    afterEach(async () => {
      await server.close();
      await receiver.close();
      await store.destroy();
    });

    it("subscriptions are per tenant and admin only; the secret is shown once", async () => {
      await start();
      expect(
        (await alice()("POST", "/webhooks", { url: receiver.url, events: ["run.finished"] }))
          .status,
      ).toBe(403);
      const refused = await admin()("POST", "/webhooks", { url: "ftp://x", events: ["nope"] });
      expect(refused.status).toBe(400);
      expect(refused.body["error"]).toBe("invalid_input");
      const acme = await subscribe({ events: ["interrupt.pending"], graphs: ["ask"] });
      expect(acme.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      expect(acme.tenant).toBe("acme");
      const globex = await subscribe({ events: ["interrupt.pending"] }, bob());
      const listed = await admin()<{ items: Json[] }>("GET", "/webhooks");
      expect(listed.body.items.map((w) => w["id"])).toEqual([acme.id]);
      expect(JSON.stringify(listed.body)).not.toContain("whsec_");
      // Another tenant's subscription does not exist for this token, and stays.
      expect((await bob()("DELETE", `/webhooks/${acme.id}`)).status).toBe(404);
      expect((await bob()("GET", `/webhooks/${acme.id}/deliveries`)).status).toBe(404);
      expect((await bob()("POST", `/webhooks/${acme.id}/rotate`, {})).status).toBe(404);
      expect((await admin()<{ items: Json[] }>("GET", "/webhooks")).body.items).toHaveLength(1);
      expect((await bob()("DELETE", `/webhooks/${globex.id}`)).body).toEqual({
        id: globex.id,
        deleted: true,
      });
      expect((await bob()<{ items: Json[] }>("GET", "/webhooks")).body.items).toEqual([]);
    });

    it("a run's question, answer and end arrive signed, with decision and actor; other tenants get nothing", async () => {
      await start();
      const hook = await subscribe({
        events: ["interrupt.pending", "interrupt.answered", "run.finished"],
      });
      await subscribe({ events: ["interrupt.pending", "run.finished"] }, bob());
      await alice()("POST", "/threads", { graph: "ask", threadId: "t-hook" });
      const paused = await alice()<{ interrupts: { id: string; runId: string }[] }>(
        "POST",
        "/threads/t-hook/runs",
        { input: { question: "Refund 40 EUR?" }, wait: true },
      );
      const asked = paused.body.interrupts[0]!;
      await receiver.waitFor(() => receiver.accepted.length === 1);
      const done = await alice()<{ status: string }>("POST", "/threads/t-hook/resume", {
        resume: { text: "yes" },
      });
      expect(done.body.status).toBe("done");
      await receiver.waitFor(() => receiver.accepted.length === 3);
      // Deliveries run concurrently: they may arrive in any order.
      const byType = (type: string) => receiver.accepted.find((h) => h.type === type);
      const [pending, answered, finished] = [
        byType("interrupt.pending"),
        byType("interrupt.answered"),
        byType("run.finished"),
      ];
      for (const h of receiver.accepted) expect(verify(hook.secret, h)).toEqual(JSON.parse(h.body));
      expect(() =>
        verify("whsec_" + Buffer.from("x".repeat(24)).toString("base64"), pending!),
      ).toThrow();
      expect(pending).toMatchObject({
        type: "interrupt.pending",
        data: {
          threadId: "t-hook",
          runId: asked.runId,
          interruptId: asked.id,
          graph: "ask",
          rootGraph: "ask",
          tenant: "acme",
          status: "pending",
          node: "ask",
          payload: { question: "Refund 40 EUR?" },
          payloadOmitted: false,
          path: [{ graph: "ask", node: "ask" }],
          actor: null,
          decision: null,
          approvers: null,
        },
      });
      expect(answered).toMatchObject({
        type: "interrupt.answered",
        data: {
          interruptId: asked.id,
          status: "answered",
          actor: "alice@acme",
          decision: { text: "yes" },
        },
      });
      expect(finished).toMatchObject({
        type: "run.finished",
        data: { threadId: "t-hook", graph: "ask", tenant: "acme", status: "done", error: null },
      });
      expect(new Set(receiver.received.map((h) => h.id)).size).toBe(3);
      // The 204 is recorded after the receiver has the event: poll the rows rather than read once.
      await expect
        .poll(
          async () =>
            (await deliveries(hook.id)).map((d) => [d.status, d.attempts, d.log[0]?.statusCode]),
          { timeout: 5_000, interval: 20 },
        )
        .toEqual([
          ["delivered", 1, 204],
          ["delivered", 1, 204],
          ["delivered", 1, 204],
        ]);
    });

    it("a deadline's resolution is interrupt.expired, by system:timer with the onTimeout value", async () => {
      await start();
      await subscribe({ events: ["interrupt.expired", "interrupt.answered"] });
      await alice()("POST", "/threads", { graph: "ask", threadId: "t-late" });
      await alice()("POST", "/threads/t-late/runs", { input: { timeoutMs: 300 }, wait: true });
      await receiver.waitFor(() => receiver.accepted.length >= 1);
      await new Promise((r) => setTimeout(r, 200));
      expect(receiver.accepted.map((h) => [h.type, h.data["actor"]])).toEqual([
        ["interrupt.expired", "system:timer"],
      ]);
      expect(receiver.accepted[0]).toMatchObject({
        type: "interrupt.expired",
        data: { status: "answered", actor: "system:timer", decision: { text: "timed out" } },
      });
    });

    it("after a rotation both secrets verify until the grace ends", async () => {
      await start();
      const hook = await subscribe({ events: ["interrupt.pending"] });
      const rotated = await admin()<{ secret: string; previousSecretUntil: string }>(
        "POST",
        `/webhooks/${hook.id}/rotate`,
        { graceSeconds: 600 },
      );
      expect(rotated.body.secret).not.toBe(hook.secret);
      await alice()("POST", "/threads", { graph: "ask", threadId: "t-rot" });
      await alice()("POST", "/threads/t-rot/runs", { input: {}, wait: true });
      await receiver.waitFor(() => receiver.accepted.length === 1);
      const received = receiver.accepted[0]!;
      expect(received.signature.split(" ")).toHaveLength(2);
      expect(verify(hook.secret, received)).toBeTruthy();
      expect(verify(rotated.body.secret, received)).toBeTruthy();
      await admin()("POST", `/webhooks/${hook.id}/rotate`, { graceSeconds: 0 });
      const [, listed] = [0, (await admin()<{ items: Json[] }>("GET", "/webhooks")).body.items[0]];
      expect(Date.parse(String(listed?.["previousSecretUntil"]))).toBeLessThanOrEqual(Date.now());
    });

    it("a receiver down for a while gets the event when it is back, under the same id", async () => {
      await start();
      const hook = await subscribe({ events: ["interrupt.pending"] });
      await receiver.down();
      await alice()("POST", "/threads", { graph: "ask", threadId: "t-down" });
      await alice()("POST", "/threads/t-down/runs", { input: {}, wait: true });
      // At least three attempts failed while it was down (within 5 s).
      const failing = await vi.waitFor(
        async () => {
          const delivery = (await deliveries(hook.id))[0];
          if (!delivery || delivery.attempts < 3)
            throw new Error(`${delivery?.attempts ?? 0} attempt(s) so far`);
          return delivery;
        },
        { timeout: 5_000, interval: 50 },
      );
      expect(failing.status).toBe("pending");
      expect(failing.attempts).toBeGreaterThanOrEqual(3);
      expect(failing.log.every((a) => a.statusCode === null && a.error !== null)).toBe(true);
      expect(failing.nextAttemptAt).not.toBeNull();
      await receiver.up();
      await receiver.waitFor(() => receiver.accepted.length === 1, 5_000);
      expect(receiver.accepted[0]!.id).toBe(failing.eventId);
      // The 2xx is recorded after the receiver has the event: wait for the row to say so.
      const delivered = await vi.waitFor(
        async () => {
          const delivery = (await deliveries(hook.id))[0]!;
          if (delivery.status !== "delivered") throw new Error(`delivery is ${delivery.status}`);
          return delivery;
        },
        { timeout: 5_000, interval: 20 },
      );
      expect(delivered.status).toBe("delivered");
      expect(delivered.attempts).toBe(
        failing.log.length + (delivered.attempts - failing.log.length),
      );
      expect(delivered.log.at(-1)?.statusCode).toBe(204);
    });

    it("finished deliveries past the retention leave the log with their events; a pending one and its event stay", async () => {
      await start({ retentionMs: 1_000, pruneEveryMs: 100, backoffMs: 50, maxBackoffMs: 100 });
      const kept = await subscribe({ events: ["interrupt.pending"] });
      // A second subscription whose receiver refuses every connection: its delivery stays pending.
      const refused = await subscribe({
        events: ["interrupt.pending"],
        url: "http://127.0.0.1:9/refused",
      });
      await alice()("POST", "/threads", { graph: "ask", threadId: "t-prune" });
      await alice()("POST", "/threads/t-prune/runs", { input: {}, wait: true });
      await receiver.waitFor(() => receiver.received.length === 1);
      // The receiver's 204 is recorded after the receiver has it: poll for the delivered row.
      await expect
        .poll(async () => (await deliveries(kept.id)).map((d) => d.status), { interval: 20 })
        .toEqual(["delivered"]);
      // Past the retention the delivered one is gone, the pending one is not.
      await expect.poll(() => deliveries(kept.id), { timeout: 5_000 }).toEqual([]);
      const [pending] = await deliveries(refused.id);
      expect(pending?.status).toBe("pending");
      // Its event was kept: the loop still claims it and tries again.
      await expect
        .poll(async () => (await deliveries(refused.id))[0]!.attempts, { timeout: 5_000 })
        .toBeGreaterThan(pending!.attempts);
      expect(await outboxEvents(store.store)).toBe(1);
      // With its last subscription gone, the event is pruned too.
      expect((await admin()("DELETE", `/webhooks/${refused.id}`)).status).toBe(200);
      await expect.poll(() => outboxEvents(store.store), { timeout: 5_000 }).toBe(0);
    });

    it("a delivery failing every attempt is dead after the last, with every attempt logged", async () => {
      await start({ maxAttempts: 3 });
      const hook = await subscribe({ events: ["interrupt.pending"] });
      receiver.answer = () => 500;
      await alice()("POST", "/threads", { graph: "ask", threadId: "t-dead" });
      await alice()("POST", "/threads/t-dead/runs", { input: {}, wait: true });
      await receiver.waitFor(() => receiver.received.length === 3);
      await new Promise((r) => setTimeout(r, 1_500));
      expect(receiver.received).toHaveLength(3);
      const [dead] = await deliveries(hook.id);
      expect(dead).toMatchObject({ status: "dead", attempts: 3, nextAttemptAt: null });
      expect(dead!.log.map((a) => [a.attempt, a.statusCode, a.error])).toEqual([
        [1, 500, "HTTP 500"],
        [2, 500, "HTTP 500"],
        [3, 500, "HTTP 500"],
      ]);
    });

    it("a receiver that never answers does not delay a run; the attempt times out", async () => {
      await start({ timeoutMs: 1_500 });
      const hook = await subscribe({ events: ["interrupt.pending"] });
      receiver.answer = () => "hold";
      await alice()("POST", "/threads", { graph: "ask", threadId: "t-slow" });
      await alice()("POST", "/threads/t-slow/runs", { input: {}, wait: true });
      await receiver.waitFor(() => receiver.received.length >= 1);
      const done = await alice()<{ status: string }>("POST", "/threads/t-slow/resume", {
        resume: { text: "go" },
      });
      // The run finished while its question's webhook was still waiting for an answer.
      expect(done.body.status).toBe("done");
      expect(receiver.received[0]!.status).toBeNull();
      expect((await deliveries(hook.id))[0]?.log).toEqual([]);
      const log = await vi.waitFor(
        async () => {
          const attempts = (await deliveries(hook.id))[0]?.log ?? [];
          if (attempts.length === 0) throw new Error("no delivery attempt logged");
          return attempts;
        },
        { timeout: 5_000, interval: 50 },
      );
      expect(log[0]?.error).toBe("no answer within 1500 ms");
    });

    it("1,000 events against a receiver failing 30% of the time: all delivered, one id each", async () => {
      await start();
      const hook = await subscribe({ events: ["interrupt.pending"] });
      let calls = 0;
      receiver.answer = () => (calls++ % 10 < 3 ? 503 : 204);
      const s = store.store;
      await s.putThread(makeThread("t-many", { tenant: "acme" }));
      await s.commitStep(makeCommit(makeCheckpoint("t-many", checkpointId(1)), null));
      const ids = Array.from({ length: 1000 }, (_, i) => `q-${i}`);
      for (let i = 0; i < ids.length; i += 100)
        await s.putTaskOutcome(
          makeOutcome("t-many", checkpointId(1), pausedResult(`task-${i}`), {
            interrupts: ids.slice(i, i + 100).map((id) =>
              makeInterrupt("t-many", id, {
                taskId: taskId(`task-${i}`),
                tenant: "acme",
                graph: "ask",
              }),
            ),
          }),
        );
      await receiver.waitFor(
        () => new Set(receiver.accepted.map((h) => h.id)).size === 1000,
        45_000,
      );
      const byInterrupt = new Map<string, Set<string>>();
      for (const h of receiver.received) {
        const id = String(h.data["interruptId"]);
        byInterrupt.set(id, (byInterrupt.get(id) ?? new Set()).add(h.id));
      }
      expect([...byInterrupt.keys()].sort()).toEqual([...ids].sort());
      // No event under two ids; retries (the 30%) repeat the same id.
      expect([...byInterrupt.values()].every((set) => set.size === 1)).toBe(true);
      expect(receiver.received.length).toBeGreaterThan(1200);
      const duplicates = receiver.accepted.length - 1000;
      expect(duplicates).toBeGreaterThanOrEqual(0);
      const log = (
        await admin()<{ items: Delivery[] }>("GET", `/webhooks/${hook.id}/deliveries?limit=500`)
      ).body.items;
      expect(log.every((d) => d.status === "delivered")).toBe(true);
    }, 60_000);
  });
}

suite(sqliteBackend);
suite(await postgresBackend());
