/**
 * The webhook outbox contract every store passes: which writes record which events (in the same
 * operation or transaction as the write), for which subscriptions, and how deliveries are
 * claimed under a lease and recorded.
 */
import { registerLadderSpecs } from "./ladder.ts";
import { describe, expect, it } from "vitest";
import type { AnswerBatch, Checkpointer } from "../checkpoint/types.ts";
import type {
  ClaimedDelivery,
  StoredWebhookSubscription,
  WebhookEventType,
  WebhookStore,
} from "../checkpoint/webhooks.ts";
import { TIMER_ACTOR, WEBHOOK_EVENT_TYPES } from "../checkpoint/webhooks.ts";
import { jsonSerializer } from "../serde.ts";
import {
  checkpointId,
  interruptId,
  makeCheckpoint,
  makeCommit,
  makeInterrupt,
  makeOutcome,
  makeRun,
  makeThread,
  pausedResult,
  runId,
  taskId,
  threadId,
} from "./fixtures.ts";

/** How a backend plugs into {@link runWebhookConformance}. */
export interface WebhookTestInitializer {
  name: string;
  /** A fresh, empty store and its webhook tables. */
  create(): Promise<{ saver: Checkpointer; webhooks: WebhookStore }>;
  destroy(saver: Checkpointer): Promise<void>;
}

const C1 = checkpointId(1);
const FAR = "9999-01-01T00:00:00.000Z";

/** A subscription of `tenant` to every event type unless `over` says otherwise. */
export function makeSubscription(
  id: string,
  tenant: string | null,
  over: Partial<StoredWebhookSubscription> = {},
): StoredWebhookSubscription {
  return {
    id,
    tenant,
    url: `http://127.0.0.1:9/${id}`,
    events: [...WEBHOOK_EVENT_TYPES],
    graphs: [],
    createdAt: new Date().toISOString(),
    createdBy: "admin",
    previousSecretUntil: null,
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    previousSecret: null,
    ...over,
  };
}

/** Thread `t` of `tenant` with interrupt `id` (task `task-<id>`) pending at c1. */
async function ask(
  saver: Checkpointer,
  t: string,
  tenant: string | null,
  id: string,
  over: Parameters<typeof makeInterrupt>[2] = {},
): Promise<void> {
  await saver.putThread(makeThread(t, { tenant }));
  await saver.commitStep(makeCommit(makeCheckpoint(t, C1), null));
  await saver.putTaskOutcome(
    makeOutcome(t, C1, pausedResult(`task-${id}`), {
      interrupts: [makeInterrupt(t, id, { taskId: taskId(`task-${id}`), tenant, ...over })],
    }),
  );
}

function answer(t: string, over: Partial<AnswerBatch>): AnswerBatch {
  return {
    threadId: threadId(t),
    answers: [],
    wake: [],
    actor: "alice",
    action: "answer",
    ...over,
  };
}

/** Every due delivery, claimed with a lease that lapses at once (so a later claim sees them). */
async function due(webhooks: WebhookStore): Promise<ClaimedDelivery[]> {
  const now = new Date(Date.now() + 1000).toISOString();
  const claims = await webhooks.claimDeliveries(now, now, 1000);
  // Events of one millisecond tie on time: order them by subject, then by the order of types.
  const key = (c: ClaimedDelivery): string =>
    `${c.event.interruptId ?? c.event.runId}:${WEBHOOK_EVENT_TYPES.indexOf(c.event.type)}:${c.subscription.id}`;
  return claims.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

function types(claims: readonly ClaimedDelivery[]): WebhookEventType[] {
  return claims.map((c) => c.event.type);
}

type Body = (saver: Checkpointer, webhooks: WebhookStore) => Promise<void>;

/** Registers the webhook outbox suite for one backend. */
export function runWebhookConformance(init: WebhookTestInitializer): void {
  const spec = (title: string, body: Body): void => {
    it(title, async () => {
      const { saver, webhooks } = await init.create();
      try {
        await body(saver, webhooks);
      } finally {
        await init.destroy(saver);
      }
    });
  };
  describe(`webhook outbox conformance: ${init.name}`, () => {
    registerEventSpecs(spec);
    registerDeliverySpecs(spec);
    registerLadderSpecs(spec);
  });
}

function registerEventSpecs(spec: (title: string, body: Body) => void): void {
  spec(
    "an asked and answered interrupt records pending, then answered with actor and decision",
    async (saver, webhooks) => {
      await webhooks.createSubscription(makeSubscription("wh_a", "acme"));
      await ask(saver, "t1", "acme", "i1");
      const refused = await saver.answerInterrupts(
        answer("t1", { answers: [{ id: interruptId("missing"), value: 1 }] }),
      );
      expect(refused.ok).toBe(false);
      const outcome = await saver.answerInterrupts(
        answer("t1", { answers: [{ id: interruptId("i1"), value: { approved: true } }] }),
      );
      expect(outcome).toEqual({ ok: true });
      const claims = await due(webhooks);
      // The refused answer recorded nothing: it changed no row.
      expect(types(claims)).toEqual(["interrupt.pending", "interrupt.answered"]);
      const answered = claims[1]?.event;
      expect(answered).toMatchObject({
        tenant: "acme",
        threadId: "t1",
        runId: "run-1",
        interruptId: "i1",
        graph: "agent",
        rootGraph: "agent",
        status: "answered",
        actor: "alice",
      });
      expect(jsonSerializer.deserialize(answered?.answer ?? "null")).toEqual({ approved: true });
      expect(answered?.eventId).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(new Set(claims.map((c) => c.event.eventId)).size).toBe(2);
      expect(claims.every((c) => c.subscription.id === "wh_a" && c.attempts === 0)).toBe(true);
    },
  );

  spec(
    "a subscription receives only its tenant's events, of its types and root graphs",
    async (saver, webhooks) => {
      await webhooks.createSubscription(makeSubscription("wh_acme", "acme"));
      await webhooks.createSubscription(makeSubscription("wh_all", null));
      await webhooks.createSubscription(
        makeSubscription("wh_runs", "acme", { events: ["run.finished"] }),
      );
      await webhooks.createSubscription(
        makeSubscription("wh_other", "acme", { graphs: ["other"] }),
      );
      await ask(saver, "t1", "acme", "i1");
      await ask(saver, "t2", "globex", "i2");
      const claims = await due(webhooks);
      const to = (id: string): string[] =>
        claims.filter((c) => c.subscription.id === id).map((c) => `${c.event.interruptId}`);
      expect(to("wh_acme")).toEqual(["i1"]);
      expect(to("wh_all").sort()).toEqual(["i1", "i2"]);
      expect(to("wh_runs")).toEqual([]);
      expect(to("wh_other")).toEqual([]);
      // One event, one id, for every subscription it reached.
      const ids = claims.filter((c) => c.event.interruptId === "i1").map((c) => c.event.eventId);
      expect(new Set(ids).size).toBe(1);
    },
  );

  spec("a store with no subscription records nothing for a later one", async (saver, webhooks) => {
    await ask(saver, "t1", null, "i1");
    await webhooks.createSubscription(makeSubscription("wh_late", null));
    expect(await due(webhooks)).toEqual([]);
    expect(await webhooks.listDeliveries("wh_late", 10)).toEqual([]);
  });

  spec(
    "the timer's answer and a cancel past the deadline are interrupt.expired; an early cancel is interrupt.cancelled",
    async (saver, webhooks) => {
      await webhooks.createSubscription(makeSubscription("wh_a", null));
      const past = { deadline: "2000-01-01T00:00:00.000Z" };
      await ask(saver, "t1", null, "i1", past);
      await ask(saver, "t2", null, "i2", past);
      await ask(saver, "t3", null, "i3", { deadline: FAR });
      await saver.answerInterrupts(
        answer("t1", {
          answers: [{ id: interruptId("i1"), value: "default" }],
          actor: TIMER_ACTOR,
          action: "timeout",
        }),
      );
      await saver.answerInterrupts(
        answer("t2", { cancel: [interruptId("i2")], actor: TIMER_ACTOR, action: "timeout" }),
      );
      await saver.answerInterrupts(answer("t3", { cancel: [interruptId("i3")] }));
      const resolved = (await due(webhooks)).filter((c) => c.event.type !== "interrupt.pending");
      expect(resolved.map((c) => [c.event.interruptId, c.event.type, c.event.status])).toEqual([
        ["i1", "interrupt.expired", "answered"],
        ["i2", "interrupt.expired", "cancelled"],
        ["i3", "interrupt.cancelled", "cancelled"],
      ]);
      expect(resolved[0]?.event.actor).toBe(TIMER_ACTOR);
    },
  );

  spec("a superseded pending interrupt is interrupt.cancelled", async (saver, webhooks) => {
    await webhooks.createSubscription(makeSubscription("wh_a", null));
    await ask(saver, "t1", null, "i1");
    await saver.putTaskOutcome(
      makeOutcome("t1", C1, pausedResult("task-i1"), {
        interrupts: [makeInterrupt("t1", "i1b", { taskId: taskId("task-i1"), revision: 1 })],
        superseded: [interruptId("i1")],
      }),
    );
    const claims = await due(webhooks);
    expect(claims.map((c) => [c.event.interruptId, c.event.type])).toEqual([
      ["i1", "interrupt.pending"],
      ["i1", "interrupt.cancelled"],
      ["i1b", "interrupt.pending"],
    ]);
  });

  spec(
    "a root run reaching done or error records run.finished once; a child run none",
    async (saver, webhooks) => {
      await webhooks.createSubscription(makeSubscription("wh_a", "acme"));
      await saver.putThread(makeThread("t1", { tenant: "acme" }));
      await saver.putRun(makeRun("t1", "r1"));
      await saver.putRun(makeRun("t1", "r1", { status: "done" }));
      await saver.putRun(makeRun("t1", "r1", { status: "done" }));
      await saver.putRun(
        makeRun("t1", "child", { status: "done", parentRunId: runId("r1"), graph: "sub" }),
      );
      await saver.putRun(makeRun("t1", "r2", { status: "interrupted" }));
      await saver.putRun(makeRun("t1", "r3", { status: "error", graph: "agent" }));
      const claims = await due(webhooks);
      expect(claims.map((c) => [c.event.type, c.event.runId, c.event.status])).toEqual([
        ["run.finished", "r1", "done"],
        ["run.finished", "r3", "error"],
      ]);
      expect(claims[0]?.event).toMatchObject({
        tenant: "acme",
        graph: "agent",
        rootGraph: "agent",
      });
    },
  );
}

function registerDeliverySpecs(spec: (title: string, body: Body) => void): void {
  spec(
    "a claimed delivery is leased: no second claim until the lease lapses, then the same event id",
    async (saver, webhooks) => {
      await webhooks.createSubscription(makeSubscription("wh_a", null));
      await ask(saver, "t1", null, "i1");
      const now = new Date(Date.now() + 1000).toISOString();
      const later = new Date(Date.now() + 60_000).toISOString();
      const first = await webhooks.claimDeliveries(now, later, 10);
      expect(first).toHaveLength(1);
      expect(await webhooks.claimDeliveries(now, later, 10)).toEqual([]);
      const again = await webhooks.claimDeliveries(later, later, 10);
      expect(again.map((c) => c.event.eventId)).toEqual(first.map((c) => c.event.eventId));
    },
  );

  spec(
    "attempts are recorded: a retry is due at its time, a delivered or dead one never again",
    async (saver, webhooks) => {
      await webhooks.createSubscription(makeSubscription("wh_a", null));
      await ask(saver, "t1", null, "i1");
      await ask(saver, "t2", null, "i2");
      const [one, two] = await due(webhooks);
      if (!one || !two) throw new Error("two deliveries expected");
      const at = new Date().toISOString();
      const retryAt = new Date(Date.now() + 30_000).toISOString();
      const base = { subscriptionId: "wh_a", at, durationMs: 12.4 };
      await webhooks.recordAttempt({
        ...base,
        eventId: one.event.eventId,
        attempt: 1,
        statusCode: 500,
        error: "HTTP 500",
        outcome: "retry",
        nextAttemptAt: retryAt,
      });
      await webhooks.recordAttempt({
        ...base,
        eventId: two.event.eventId,
        attempt: 1,
        statusCode: 204,
        error: null,
        outcome: "delivered",
        nextAttemptAt: null,
      });
      expect(await due(webhooks)).toEqual([]);
      const retried = await webhooks.claimDeliveries(FAR, FAR, 10);
      expect(retried.map((c) => [c.event.eventId, c.attempts])).toEqual([[one.event.eventId, 1]]);
      await webhooks.recordAttempt({
        ...base,
        eventId: one.event.eventId,
        attempt: 2,
        statusCode: null,
        error: "connection refused",
        outcome: "dead",
        nextAttemptAt: null,
      });
      expect(await webhooks.claimDeliveries(FAR, FAR, 10)).toEqual([]);
      const log = await webhooks.listDeliveries("wh_a", 10);
      const byEvent = new Map(log.map((d) => [d.eventId, d]));
      expect(byEvent.get(one.event.eventId)).toMatchObject({
        status: "dead",
        attempts: 2,
        nextAttemptAt: null,
        type: "interrupt.pending",
      });
      expect(byEvent.get(one.event.eventId)?.log).toEqual([
        { attempt: 1, at, statusCode: 500, error: "HTTP 500", durationMs: 12 },
        { attempt: 2, at, statusCode: null, error: "connection refused", durationMs: 12 },
      ]);
      expect(byEvent.get(two.event.eventId)).toMatchObject({ status: "delivered", attempts: 1 });
    },
  );

  spec(
    "subscriptions: listed by tenant, rotated keeping the old secret, deleted with their deliveries",
    async (saver, webhooks) => {
      await webhooks.createSubscription(makeSubscription("wh_a", "acme"));
      await webhooks.createSubscription(makeSubscription("wh_b", "globex"));
      expect((await webhooks.listSubscriptions("acme")).map((s) => s.id)).toEqual(["wh_a"]);
      expect((await webhooks.listSubscriptions()).map((s) => s.id).sort()).toEqual([
        "wh_a",
        "wh_b",
      ]);
      const until = new Date(Date.now() + 3_600_000).toISOString();
      expect(await webhooks.rotateSecret("wh_a", "whsec_bmV3", until)).toBe(true);
      expect(await webhooks.rotateSecret("wh_none", "whsec_bmV3", until)).toBe(false);
      expect(await webhooks.getSubscription("wh_a")).toMatchObject({
        secret: "whsec_bmV3",
        previousSecret: makeSubscription("x", null).secret,
        previousSecretUntil: until,
      });
      await ask(saver, "t1", "acme", "i1");
      expect(await webhooks.deleteSubscription("wh_a")).toBe(true);
      expect(await webhooks.deleteSubscription("wh_a")).toBe(false);
      expect(await webhooks.getSubscription("wh_a")).toBeUndefined();
      expect(await due(webhooks)).toEqual([]);
    },
  );
}
