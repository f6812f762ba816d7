/**
 * Governance over real HTTP, one suite on SQLite and on Postgres: tokens carry groups and roles;
 * a refund over $1,000 needs two approvers from finance and not the requester (403 `not_allowed`
 * naming the rule, nothing stored); the queue shows "1 of 2"; eight approvers racing with eight
 * tokens apply it exactly once; a server default policy (`policies`) governs a graph without its
 * own; bulk decisions apply to 1,000 interrupts across 100 threads, or to none.
 */
import { describe, expect, it } from "vitest";
import {
  END,
  START,
  Send,
  StateGraph,
  append,
  lastValue,
  type Checkpointer,
  type InterruptId,
  type ThreadId,
} from "@rein/core";
import { tokenAuth, type TokenConfig } from "./auth.ts";
import type { GraphFactory } from "./registry.ts";
import { graphs as testGraphs } from "./testing/graphs.ts";
import {
  client,
  postgresBackend,
  serveOn,
  snapshotStore,
  sqliteBackend,
  type Backend,
} from "./testing/harness.ts";

const pg = await postgresBackend();
const backends: Backend[] = [sqliteBackend, pg];

/** How often each thread's refund ran (the action behind the approval). */
const refunds = new Map<string, number>();

function refund(store: Checkpointer) {
  return new StateGraph({ amount: lastValue<number>(() => 0), decision: lastValue<unknown>() })
    .addNode("ask", (s, ctx) => ({
      decision: ctx.interrupt(
        { action: "refund", amount: s.amount },
        {
          approvers: {
            when: { path: "amount", gt: 1000 },
            then: { groups: ["finance"], count: 2 },
          },
        },
      ),
    }))
    .addNode("pay", (_s, ctx) => {
      refunds.set(ctx.threadId, (refunds.get(ctx.threadId) ?? 0) + 1);
      return {};
    })
    .addEdge(START, "ask")
    .addEdge("ask", "pay")
    .addEdge("pay", END)
    .compile({ checkpointer: store, name: "refund" });
}

/** A question without approvers of its own: the server's default policy governs it. */
function race(store: Checkpointer) {
  return new StateGraph({ decision: lastValue<unknown>() })
    .addNode("ask", (_s, ctx) => ({ decision: ctx.interrupt({ action: "wire", amount: 9000 }) }))
    .addNode("pay", (_s, ctx) => {
      refunds.set(ctx.threadId, (refunds.get(ctx.threadId) ?? 0) + 1);
      return {};
    })
    .addEdge(START, "ask")
    .addEdge("ask", "pay")
    .addEdge("pay", END)
    .compile({ checkpointer: store, name: "race" });
}

/** Ten questions at once per thread (parallel tasks): the emails of a bulk decision. */
function emails(store: Checkpointer) {
  return new StateGraph({ n: lastValue<number>(() => 10), sent: append<string>() })
    .addNode("plan", () => ({}))
    .addNode("draft", (input: { i: number }, ctx) => ({
      sent: `${input.i}: ${String(ctx.interrupt({ action: "send_email", i: input.i }))}`,
    }))
    .addEdge(START, "plan")
    .addConditionalEdges("plan", (s) =>
      Array.from({ length: s.n }, (_, i) => new Send("draft", { i })),
    )
    .addEdge("draft", END)
    .compile({ checkpointer: store, name: "emails" });
}

const graphs: Record<string, GraphFactory> = { ...testGraphs, refund, race, emails };

const token = (subject: string, extra: Partial<TokenConfig> = {}): TokenConfig => ({
  token: `${subject}-governance-token-0123`,
  subject,
  tenant: "acme",
  scopes: ["read", "run", "resume"],
  ...extra,
});
const people = {
  rita: token("rita", { groups: ["finance"] }),
  alice: token("alice", { groups: ["finance"], roles: ["approver"] }),
  bob: token("bob", { groups: ["finance"] }),
  mallory: token("mallory", { groups: ["support"] }),
};
const approvers = Array.from({ length: 8 }, (_, i) =>
  token(`approver${i}`, { roles: ["approver"] }),
);

type Json = Record<string, unknown>;
type Approval = { required: number; approvals: { actor: string; digest: string }[] };

for (const backend of backends) {
  describe.skipIf(!backend.available)(`governance over HTTP on ${backend.name}`, () => {
    const served = serveOn(backend, {
      graphs,
      auth: tokenAuth([...Object.values(people), ...approvers]),
      policies: { race: { roles: ["approver"], count: 2 } },
    });
    const as = (who: TokenConfig) => client(served.url, who.token);

    async function started(graph: string, input: Json, who = people.rita) {
      const created = await as(who)<{ threadId: string }>("POST", "/threads", { graph });
      const threadId = created.body.threadId;
      const run = await as(who)<{ status: string; interrupts: { id: string }[] }>(
        "POST",
        `/threads/${threadId}/runs`,
        { input, wait: true },
      );
      expect(run.body.status).toBe("interrupted");
      return { threadId, interruptId: run.body.interrupts[0]?.id ?? "" };
    }

    it("GET /whoami shows the token's groups and roles", async () => {
      const me = await as(people.alice)("GET", "/whoami");
      expect(me.body).toMatchObject({ subject: "alice", groups: ["finance"], roles: ["approver"] });
    });

    it("a refund over $1,000: refused for support and the requester (403, nothing stored), 1 of 2 after alice, alice again refused, applied once on bob's", async () => {
      const { threadId, interruptId } = await started("refund", { amount: 5000 });
      const resume = (who: TokenConfig) =>
        as(who)<Json>("POST", `/threads/${threadId}/resume`, { resume: { approved: true } });
      const before = await snapshotStore(served.store);
      const support = await resume(people.mallory);
      expect(support.status).toBe(403);
      expect(support.body).toMatchObject({
        error: "not_allowed",
        details: { interruptId, rule: "not_listed", policy: { groups: ["finance"], count: 2 } },
      });
      const own = await resume(people.rita);
      expect(own.status).toBe(403);
      expect((own.body["details"] as Json)["rule"]).toBe("requester");
      expect(await snapshotStore(served.store)).toBe(before);

      const first = await resume(people.alice);
      expect(first.status).toBe(200);
      expect(first.body["status"]).toBe("interrupted");
      const queue = await as(people.bob)<{ items: { id: string; approval?: Approval }[] }>(
        "GET",
        "/interrupts",
      );
      const item = queue.body.items.find((i) => i.id === interruptId);
      expect(item?.approval?.required).toBe(2);
      expect(item?.approval?.approvals.map((a) => a.actor)).toEqual(["alice"]);
      expect(item?.approval?.approvals[0]?.digest).toMatch(/^sha256:[0-9a-f]{64}$/);

      const again = await resume(people.alice);
      expect(again.status).toBe(403);
      expect((again.body["details"] as Json)["rule"]).toBe("already_approved");

      const second = await resume(people.bob);
      expect(second.status).toBe(200);
      expect(second.body["status"]).toBe("done");
      expect(refunds.get(threadId)).toBe(1);
      const audit = await as(people.bob)<{ items: { action: string; actor: string }[] }>(
        "GET",
        `/audit?threadId=${threadId}`,
      );
      expect(audit.body.items.map((a) => `${a.action}:${a.actor}`)).toEqual([
        "approval:alice",
        "answer:bob",
      ]);
    });

    it("a refund of $1,000 or less has no policy: anyone who may resume answers it", async () => {
      const { threadId } = await started("refund", { amount: 1000 });
      const done = await as(people.mallory)<Json>("POST", `/threads/${threadId}/resume`, {
        resume: { approved: true },
      });
      expect(done.status).toBe(200);
      expect(done.body["status"]).toBe("done");
    });

    it("eight approvers racing with eight tokens on a server-default policy (two needed): exactly one application, counts exact", async () => {
      const { threadId, interruptId } = await started("race", {});
      const replies = await Promise.all(
        approvers.map((who) =>
          as(who)<Json>("POST", `/threads/${threadId}/resume`, { resume: "approve" }),
        ),
      );
      const statuses = replies.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(2);
      expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
      expect(refunds.get(threadId)).toBe(1);
      const row = await served.store.getInterrupt(interruptId as InterruptId);
      expect(row?.status).toBe("answered");
      expect(row?.approvals?.approvals).toHaveLength(2);
      const audit = await served.store.listAudit({ threadId: threadId as ThreadId });
      expect(audit.items.map((a) => a.action).sort()).toEqual(["answer", "approval"]);
    });

    it(
      "a bulk decision over 1,000 interrupts across 100 threads applies to all; every thread's run finishes",
      { timeout: 240_000 },
      async () => {
        const graph = served.server.context.registry.get("emails");
        const threads: string[] = [];
        for (let t = 0; t < 100; t += 1) {
          const threadId = `bulk-${t}`;
          await graph.invoke({ n: 10 }, { threadId, tenant: "acme", actor: "rita" });
          threads.push(threadId);
        }
        const pending = await as(people.alice)<{ total: number }>(
          "GET",
          "/interrupts?graph=emails&limit=1",
        );
        expect(pending.body.total).toBe(1000);
        const stale = await as(people.alice)<Json>("POST", "/interrupts/decisions", {
          filter: { graph: "emails" },
          expectedCount: 999,
          resume: "send",
        });
        expect(stale.status).toBe(409);
        expect(stale.body).toMatchObject({
          error: "count_mismatch",
          details: { expected: 999, actual: 1000 },
        });
        const decided = await as(people.alice)<{ count: number; decided: { status: string }[] }>(
          "POST",
          "/interrupts/decisions",
          { filter: { graph: "emails" }, expectedCount: 1000, resume: "send" },
        );
        expect(decided.status).toBe(200);
        expect(decided.body.count).toBe(1000);
        expect(decided.body.decided.every((d) => d.status === "answered")).toBe(true);
        const left = await as(people.alice)<{ total: number }>("GET", "/interrupts?graph=emails");
        expect(left.body.total).toBe(0);
        // Every thread done within 180 s in all: each poll reads the threads not yet done, and
        // names the first that is not.
        const running = new Set(threads);
        const firstNotDone = async (): Promise<string> => {
          for (const threadId of running) {
            const { status } = (
              await as(people.alice)<{ status: string }>("GET", `/threads/${threadId}`)
            ).body;
            if (status !== "done") return `${threadId}: ${status}`;
            running.delete(threadId);
          }
          return "all done";
        };
        await expect.poll(firstNotDone, { timeout: 180_000, interval: 50 }).toBe("all done");
      },
    );

    it("bulk decisions racing over ten threads: one applies, each refusal lists all ten", async () => {
      const graph = served.server.context.registry.get("emails");
      const threads = Array.from({ length: 10 }, (_, i) => `race-bulk-${i}`);
      for (const threadId of threads)
        await graph.invoke({ n: 1 }, { threadId, tenant: "acme", actor: "rita" });
      const ids: string[] = [];
      for (const threadId of threads)
        ids.push(
          ...(await served.store.getThreadInterrupts(threadId as ThreadId)).map((i) => i.id),
        );
      expect(ids).toHaveLength(10);
      const replies = await Promise.all(
        [people.alice, people.bob, people.rita].map((who) =>
          as(who)<{ refused?: unknown } & Json>("POST", "/interrupts/decisions", {
            ids,
            resume: "send",
          }),
        ),
      );
      expect(replies.map((r) => r.status).sort()).toEqual([200, 409, 409]);
      for (const reply of replies.filter((r) => r.status === 409)) {
        expect(reply.body["error"]).toBe("bulk_refused");
        const refused = (reply.body["details"] as { refused: Json[] }).refused;
        expect(refused.map((r) => r["interruptId"]).sort()).toEqual([...ids].sort());
        expect(new Set(refused.map((r) => r["code"]))).toEqual(new Set(["stale_target"]));
      }
    });

    it("a bulk decision with one interrupt not allowed applies to none and lists why", async () => {
      const graph = served.server.context.registry.get("emails");
      await graph.invoke({ n: 10 }, { threadId: "bulk-a", tenant: "acme", actor: "rita" });
      const big = await started("refund", { amount: 5000 });
      const ids = [
        ...(await served.store.getThreadInterrupts("bulk-a" as ThreadId)).map((i) => i.id),
        big.interruptId,
      ];
      const before = await snapshotStore(served.store);
      const refused = await as(people.mallory)<Json>("POST", "/interrupts/decisions", {
        ids,
        resume: "send",
      });
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({
        error: "bulk_refused",
        details: { refused: [{ interruptId: big.interruptId, code: "not_allowed" }] },
      });
      expect(await snapshotStore(served.store)).toBe(before);
      const partial = await as(people.alice)<{
        decided: { interruptId: string; status: string }[];
      }>("POST", "/interrupts/decisions", { ids, resume: "send" });
      expect(partial.body.decided.find((d) => d.interruptId === big.interruptId)?.status).toBe(
        "approval_recorded",
      );
    });
  });
}
