/**
 * Contracts of SPEC §10's bulk decisions on every store: one decision over interrupts of many
 * threads applies to all of them in one transaction, or — when any one is not pending, not found
 * or not allowed for the principal — to none, with the reason for each refused one.
 */
import { expect, it } from "vitest";
import {
  BulkRefusedError,
  decideInterrupts,
  END,
  lastValue,
  START,
  StateGraph,
  type ApprovalPrincipal,
  type Checkpointer,
  type InterruptId,
} from "../../index.ts";
import { Counter, rejection, threadName, type RuntimeEnv } from "./harness.ts";

const finance: ApprovalPrincipal = { subject: "alice", groups: ["finance"] };

/** One question per thread; large amounts need finance. `act` counts approved actions. */
function emailGraph(store: Checkpointer, counter: Counter) {
  return new StateGraph({ amount: lastValue<number>(), decision: lastValue<unknown>() })
    .addNode("ask", (s, ctx) => ({
      decision: ctx.interrupt(
        { amount: s.amount },
        { approvers: { when: { path: "amount", gt: 1000 }, then: { groups: ["finance"] } } },
      ),
    }))
    .addNode("act", () => {
      counter.hit("act");
      return {};
    })
    .addEdge(START, "ask")
    .addEdge("ask", "act")
    .addEdge("act", END)
    .compile({ checkpointer: store, name: "emails" });
}

async function pausedThreads(graph: ReturnType<typeof emailGraph>, amounts: number[]) {
  const out: { threadId: string; id: string }[] = [];
  for (const amount of amounts) {
    const threadId = threadName("bulk");
    const result = await graph.invoke({ amount }, { threadId, actor: "rita" });
    out.push({ threadId, id: result.interrupts[0]?.id ?? "" });
  }
  return out;
}

/** Registers the contracts. */
export function bulkContracts(env: RuntimeEnv): void {
  it(
    "one decision over many threads answers every interrupt; each thread's run then continues",
    env.withStore(async (store) => {
      const counter = new Counter();
      const graph = emailGraph(store, counter);
      const paused = await pausedThreads(graph, [10, 20, 2000, 30]);
      const decided = await decideInterrupts(store, {
        ids: paused.map((p) => p.id),
        value: "send",
        actor: "alice",
        principal: finance,
      });
      expect(decided.map((d) => d.status)).toEqual([
        "answered",
        "answered",
        "answered",
        "answered",
      ]);
      for (const { id } of paused)
        expect((await store.getInterrupt(id as InterruptId))?.answeredBy).toBe("alice");
      for (const { threadId } of paused)
        expect((await graph.invoke(null, { threadId })).status).toBe("done");
      expect(counter.of("act")).toBe(4);
    }),
  );

  it(
    "one interrupt not allowed (or not pending) refuses the whole decision: none applied, each reason given",
    env.withStore(async (store) => {
      const counter = new Counter();
      const graph = emailGraph(store, counter);
      const paused = await pausedThreads(graph, [10, 2000, 30]);
      const support: ApprovalPrincipal = { subject: "sam", groups: ["support"] };
      const before = await store.getInterrupts(paused.map((p) => p.id as InterruptId));
      const error = await rejection(
        decideInterrupts(store, {
          ids: [...paused.map((p) => p.id), "i_missing"],
          value: "send",
          actor: "sam",
          principal: support,
        }),
      );
      expect(error).toBeInstanceOf(BulkRefusedError);
      const refused = (error as BulkRefusedError).details.refused;
      expect(refused.map((r) => [r.interruptId, r.code])).toEqual([
        [paused[1]?.id, "not_allowed"],
        ["i_missing", "not_found"],
      ]);
      const after = await store.getInterrupts(paused.map((p) => p.id as InterruptId));
      expect(after).toEqual(before);
      expect(after.every((row) => row.status === "pending")).toBe(true);
      expect(counter.of("act")).toBe(0);
    }),
  );
}
