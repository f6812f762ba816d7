/**
 * Contracts of SPEC §2: an interrupt is an exception plus a checkpoint; the node re-runs from its
 * first statement with the answer; the k-th call gets the k-th answer; side effects behind
 * `ctx.once` run once across re-runs.
 */
import { it, expect } from "vitest";
import { Command, lastValue, RunConfig, START, StateGraph } from "../../index.ts";
import { approvalGraph } from "./graphs.ts";
import { Counter, threadName, collect, type RuntimeEnv } from "./harness.ts";

/** Contracts of pausing at an interrupt and resuming with its answer. */
export function pausingContracts(env: RuntimeEnv): void {
  it(
    "an interrupt returns a typed RunResult and stores the pause; nothing stays in memory",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const threadId = threadName("pause");
      const result = await approvalGraph(saver, counter).invoke({ amount: 50 }, { threadId });
      expect(result.status).toBe("interrupted");
      expect(result.threadId).toBe(threadId);
      expect(result.values.log).toEqual(["prepared"]);
      expect(result.interrupts).toHaveLength(1);
      const [pending] = result.interrupts;
      expect(pending).toMatchObject({
        threadId,
        node: "approve",
        namespace: [],
        order: 0,
        kind: "dynamic",
        status: "pending",
        payload: { question: "refund?", amount: 50 },
      });
      expect(pending?.checkpointId).toBe(result.checkpointId);
      expect(pending?.runId).toBe(result.runId);
      // A brand-new graph object (as another process would build) sees and resumes the pause.
      const other = approvalGraph(saver, counter);
      const state = await other.getState({ threadId });
      expect(state.interrupts.map((i) => i.id)).toEqual([pending?.id]);
      const done = await other.resume(RunConfig.thread(threadId), Command.resume({ ok: true }));
      expect(done.status).toBe("done");
      expect(done.values.log).toEqual(["prepared", "approved"]);
      expect(done.interrupts).toEqual([]);
    }),
  );

  it(
    "resuming re-runs the interrupted node from its first statement, and only that node",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const threadId = threadName("rerun");
      const graph = approvalGraph(saver, counter);
      await graph.invoke({ amount: 5 }, { threadId });
      await graph.resume(RunConfig.thread(threadId), Command.resume({ ok: false }));
      expect(counter.of("prepare")).toBe(1);
      expect(counter.of("approve")).toBe(2);
      expect(counter.of("approve:after")).toBe(1);
      expect((await graph.getState({ threadId })).values.log).toEqual(["prepared", "rejected"]);
    }),
  );

  it(
    "the k-th interrupt() call gets the k-th answer; the first unanswered call pauses as the next order",
    env.withStore(async (saver) => {
      const seen: unknown[][] = [];
      const graph = new StateGraph({ answers: lastValue<unknown[]>(() => []) })
        .addNode("ask", (_s, ctx) => {
          const a = ctx.interrupt("first");
          const b = ctx.interrupt("second");
          const c = ctx.interrupt("third");
          seen.push([a, b, c]);
          return { answers: [a, b, c] };
        })
        .addEdge(START, "ask")
        .compile({ checkpointer: saver });
      const threadId = threadName("order");
      const r1 = await graph.invoke({}, { threadId });
      expect(r1.interrupts.map((i) => [i.order, i.payload])).toEqual([[0, "first"]]);
      const r2 = await graph.resume({ threadId }, Command.resume("A"));
      expect(r2.interrupts.map((i) => [i.order, i.payload])).toEqual([[1, "second"]]);
      expect(r2.interrupts[0]?.id).not.toBe(r1.interrupts[0]?.id);
      // Answer by the id the order yields, too.
      const r3 = await graph.resume(
        { threadId },
        Command.resumeMap({ [r2.interrupts[0]?.id as string]: "B" }),
      );
      expect(r3.interrupts.map((i) => i.order)).toEqual([2]);
      const r4 = await graph.resume({ threadId }, Command.resume("C"));
      expect(r4.status).toBe("done");
      expect(r4.values.answers).toEqual(["A", "B", "C"]);
      expect(seen).toEqual([["A", "B", "C"]]);
    }),
  );

  it(
    "a caught interrupt still pauses, its return value is discarded, and a debug event says so",
    env.withStore(async (saver) => {
      const graph = new StateGraph({ out: lastValue<string>(() => "untouched") })
        .addNode("wrapper", (_s, ctx) => {
          try {
            ctx.interrupt({ confirm: true });
          } catch {
            return { out: "swallowed" };
          }
          return { out: "answered" };
        })
        .addEdge(START, "wrapper")
        .compile({ checkpointer: saver });
      const threadId = threadName("caught");
      const events = await collect(graph.stream({}, { threadId, streamMode: ["debug", "values"] }));
      const end = events.find((e) => e.type === "end");
      expect(end?.type === "end" && end.result.status).toBe("interrupted");
      expect(end?.type === "end" && end.result.values.out).toBe("untouched");
      expect(events.some((e) => e.type === "debug" && /caught its interrupt/.test(e.message))).toBe(
        true,
      );
      expect(events.filter((e) => e.type === "interrupt")).toHaveLength(1);
      const done = await graph.resume({ threadId }, Command.resume("ok"));
      expect(done.values.out).toBe("answered");
    }),
  );

  it(
    "ctx.once runs a side effect once per (thread, task, key) across re-runs, with a stable idempotency key",
    env.withStore(async (saver) => {
      const charges: string[] = [];
      const graph = new StateGraph({ receipt: lastValue<string>() })
        .addNode("refund", async (_s, ctx) => {
          const receipt = await ctx.once("charge", () => {
            charges.push(ctx.idempotencyKey("charge"));
            return `r${charges.length}`;
          });
          ctx.interrupt("confirm 1");
          ctx.interrupt("confirm 2");
          return { receipt };
        })
        .addEdge(START, "refund")
        .compile({ checkpointer: saver });
      const threadId = threadName("once");
      await graph.invoke({}, { threadId });
      await graph.resume({ threadId }, Command.resume(true));
      const done = await graph.resume({ threadId }, Command.resume(true));
      expect(done.status).toBe("done");
      expect(charges).toHaveLength(1);
      expect(done.values.receipt).toBe("r1");
      expect(charges[0]).toContain(threadId);
    }),
  );
}
