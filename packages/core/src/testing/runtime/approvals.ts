/**
 * Contracts of SPEC §10 (governance) on every store: an approval policy declared with the
 * question is enforced inside the store's answer transaction; a refused answer is
 * `NotAllowedError` naming the rule and changes nothing; N-of-M approvals are recorded (actor,
 * payload digest, time) until the M-th distinct one applies; an authorised rejection applies at
 * once; an edit restarts the count; the run's requester may not approve under four eyes.
 */
import { expect, it } from "vitest";
import {
  Command,
  END,
  lastValue,
  NotAllowedError,
  RunConfig,
  START,
  StateGraph,
  type ApprovalPrincipal,
  type ApproversSpec,
  type Checkpointer,
  type ThreadId,
} from "../../index.ts";
import { payloadDigest } from "../../checkpoint/approvals.ts";
import { Counter, rejection, threadName, type RuntimeEnv } from "./harness.ts";

const alice: ApprovalPrincipal = { subject: "alice", groups: ["finance"] };
const bob: ApprovalPrincipal = { subject: "bob", groups: ["finance"] };
const carol: ApprovalPrincipal = { subject: "carol", groups: ["finance"], roles: ["lead"] };
const mallory: ApprovalPrincipal = { subject: "mallory", groups: ["support"] };
/** The requester starts every run below, and is in finance too. */
const requester: ApprovalPrincipal = { subject: "rita", groups: ["finance"] };

/** A refund question under `approvers`; `act` counts how often the approved refund ran. */
function refundGraph(store: Checkpointer, counter: Counter, approvers: ApproversSpec) {
  return new StateGraph({ amount: lastValue<number>(), decision: lastValue<unknown>() })
    .addNode("ask", (s, ctx) => ({
      decision: ctx.interrupt({ amount: s.amount }, { approvers }),
    }))
    .addNode("act", () => {
      counter.hit("act");
      return {};
    })
    .addEdge(START, "ask")
    .addEdge("ask", "act")
    .addEdge("act", END)
    .compile({ checkpointer: store, name: "refunds", lease: { ttlMs: 30_000, waitMs: 20_000 } });
}

/** Answers the thread's one pending question as `who`. */
function answer(
  graph: ReturnType<typeof refundGraph>,
  threadId: string,
  who: ApprovalPrincipal | undefined,
  value: unknown,
) {
  return graph.resume(
    RunConfig.thread(threadId),
    Command.resume(value, { actor: who?.subject ?? "script", ...(who ? { principal: who } : {}) }),
  );
}

/** What a refusal must leave unchanged: the interrupt rows and the audit log of the thread. */
async function snapshot(store: Checkpointer, threadId: string) {
  return JSON.stringify({
    interrupts: await store.getThreadInterrupts(threadId as ThreadId),
    audit: await store.listAudit({ threadId: threadId as ThreadId }),
  });
}

async function paused(graph: ReturnType<typeof refundGraph>, amount: number) {
  const threadId = threadName("gov");
  const result = await graph.invoke({ amount }, { threadId, actor: requester.subject });
  expect(result.status).toBe("interrupted");
  const id = result.interrupts[0]?.id;
  if (!id) throw new Error("no interrupt");
  return { threadId, id };
}

const FOUR_EYES: ApproversSpec = { groups: ["finance"], count: 2 };

/** Registers the contracts. */
export function approvalContracts(env: RuntimeEnv): void {
  it(
    "a principal the policy does not list is refused (not_listed) and nothing changes",
    env.withStore(async (store) => {
      const graph = refundGraph(store, new Counter(), { groups: ["finance"] });
      const { threadId, id } = await paused(graph, 50);
      const before = await snapshot(store, threadId);
      const error = await rejection(answer(graph, threadId, mallory, "yes"));
      expect(error).toBeInstanceOf(NotAllowedError);
      expect((error as NotAllowedError).details).toMatchObject({
        interruptId: id,
        rule: "not_listed",
        policy: { groups: ["finance"], count: 1, notRequester: false },
      });
      expect(await snapshot(store, threadId)).toBe(before);
      const done = await answer(graph, threadId, alice, "yes");
      expect(done.status).toBe("done");
      expect((await store.getInterrupt(id))?.answeredBy).toBe("alice");
    }),
  );

  it(
    "an answer without a principal is refused (no_principal) when a policy exists, and changes nothing",
    env.withStore(async (store) => {
      const graph = refundGraph(store, new Counter(), { subjects: ["alice"] });
      const { threadId } = await paused(graph, 50);
      const before = await snapshot(store, threadId);
      const error = await rejection(answer(graph, threadId, undefined, "yes"));
      expect((error as NotAllowedError).details.rule).toBe("no_principal");
      expect(await snapshot(store, threadId)).toBe(before);
    }),
  );

  it(
    "two of finance: the first approval is recorded, a repeat and the requester are refused, the second distinct approval applies once",
    env.withStore(async (store) => {
      const counter = new Counter();
      const graph = refundGraph(store, counter, FOUR_EYES);
      const { threadId, id } = await paused(graph, 5000);
      const first = await answer(graph, threadId, alice, { approved: true });
      expect(first.status).toBe("interrupted");
      const approval = first.interrupts[0]?.approval;
      expect(approval?.required).toBe(2);
      expect(approval?.approvals.map((a) => a.actor)).toEqual(["alice"]);
      expect(approval?.approvals[0]?.digest).toBe(payloadDigest({ amount: 5000 }));
      expect(counter.of("act")).toBe(0);
      const before = await snapshot(store, threadId);
      const again = await rejection(answer(graph, threadId, alice, { approved: true }));
      expect((again as NotAllowedError).details.rule).toBe("already_approved");
      const own = await rejection(answer(graph, threadId, requester, { approved: true }));
      expect((own as NotAllowedError).details.rule).toBe("requester");
      expect(await snapshot(store, threadId)).toBe(before);
      const second = await answer(graph, threadId, bob, { approved: true });
      expect(second.status).toBe("done");
      expect(second.values["decision"]).toEqual({ approved: true });
      expect(counter.of("act")).toBe(1);
      const row = await store.getInterrupt(id);
      expect(row?.answeredBy).toBe("bob");
      expect(row?.approvals?.approvals.map((a) => a.actor)).toEqual(["alice", "bob"]);
      const actions = (await store.listAudit({ threadId: threadId as ThreadId })).items.map(
        (line) => `${line.action}:${line.actor}`,
      );
      expect(actions).toEqual(["approval:alice", "answer:bob"]);
    }),
  );

  it(
    "an authorised rejection applies at once; a different value restarts the count with it",
    env.withStore(async (store) => {
      const counter = new Counter();
      const graph = refundGraph(store, counter, FOUR_EYES);
      const rejected = await paused(graph, 5000);
      const done = await answer(graph, rejected.threadId, alice, { type: "ignore", reason: "no" });
      expect(done.status).toBe("done");
      expect(done.values["decision"]).toEqual({ type: "ignore", reason: "no" });

      const edited = await paused(graph, 5000);
      await answer(graph, edited.threadId, alice, { type: "accept" });
      const restart = await answer(graph, edited.threadId, bob, { type: "edit", args: { n: 1 } });
      expect(restart.status).toBe("interrupted");
      expect(restart.interrupts[0]?.approval?.approvals.map((a) => a.actor)).toEqual(["bob"]);
      // The editor's approval counts once: bob cannot accept his own edit as the second.
      const self = await rejection(answer(graph, edited.threadId, bob, { type: "accept" }));
      expect((self as NotAllowedError).details.rule).toBe("already_approved");
      const applied = await answer(graph, edited.threadId, alice, { type: "accept" });
      expect(applied.status).toBe("done");
      expect(applied.values["decision"]).toEqual({ type: "edit", args: { n: 1 } });
    }),
  );

  it(
    "a declarative rule over the payload: small amounts have no policy, large ones need finance twice",
    env.withStore(async (store) => {
      const rule: ApproversSpec = {
        when: { path: "amount", gt: 1000 },
        then: { groups: ["finance"], count: 2 },
      };
      const graph = refundGraph(store, new Counter(), rule);
      const small = await paused(graph, 1000);
      expect((await store.getInterrupt(small.id))?.policy ?? null).toBeNull();
      expect((await answer(graph, small.threadId, undefined, "ok")).status).toBe("done");
      const large = await paused(graph, 1001);
      const row = await store.getInterrupt(large.id);
      expect(row?.policy).toMatchObject({ groups: ["finance"], count: 2, requester: "rita" });
      const refused = await rejection(answer(graph, large.threadId, mallory, "ok"));
      expect((refused as NotAllowedError).details.rule).toBe("not_listed");
    }),
  );

  it(
    "concurrent approvers on one interrupt (two needed): exactly one application, counts exact",
    env.withStore(async (store) => {
      const counter = new Counter();
      const graph = refundGraph(store, counter, { roles: ["approver"], count: 2 });
      const { threadId, id } = await paused(graph, 5000);
      const people = Array.from({ length: 8 }, (_, i) => ({
        subject: `p${i}`,
        roles: ["approver"],
      }));
      const outcomes = await Promise.allSettled(
        people.map((p) => answer(graph, threadId, p, "approve")),
      );
      const ok = outcomes.filter((o) => o.status === "fulfilled");
      // One approval recorded, one that applied; every later answer found it answered.
      expect(ok).toHaveLength(2);
      expect(counter.of("act")).toBe(1);
      const row = await store.getInterrupt(id);
      expect(row?.status).toBe("answered");
      expect(row?.approvals?.approvals).toHaveLength(2);
      const audit = await store.listAudit({ threadId: threadId as ThreadId });
      expect(audit.items.map((line) => line.action).sort()).toEqual(["answer", "approval"]);
    }),
  );

  it(
    "a graph's default approvers (withApprovers) govern questions raised without their own; carol's role is enough",
    env.withStore(async (store) => {
      const graph = new StateGraph({ decision: lastValue<unknown>() })
        .addNode("ask", (_s, ctx) => ({ decision: ctx.interrupt({ amount: 1 }) }))
        .addEdge(START, "ask")
        .addEdge("ask", END)
        .compile({ checkpointer: store, name: "defaults" })
        .withApprovers({ roles: ["lead"] });
      const threadId = threadName("gov-default");
      await graph.invoke({}, { threadId, actor: "rita" });
      const refused = await rejection(
        graph.resume(RunConfig.thread(threadId), Command.resume(1, { principal: alice })),
      );
      expect((refused as NotAllowedError).details.rule).toBe("not_listed");
      const done = await graph.resume(
        RunConfig.thread(threadId),
        Command.resume(1, { actor: "carol", principal: carol }),
      );
      expect(done.status).toBe("done");
    }),
  );
}
