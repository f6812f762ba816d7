/**
 * Contracts of the determinism guard: a question that changed since it was answered is asked
 * again instead of taking the old answer, unless the graph turned the guard off.
 */
import { it, expect } from "vitest";
import { Command, lastValue, START, StateGraph } from "../../index.ts";
import { threadName, collect, type RuntimeEnv } from "./harness.ts";

/** Contracts of the determinism guard. */
export function determinismContracts(env: RuntimeEnv): void {
  it(
    "the determinism guard supersedes an answered question that changed, and never applies the old answer",
    env.withStore(async (saver) => {
      let amount = 50;
      const applied: number[] = [];
      const graph = new StateGraph({ paid: lastValue<number>() })
        .addNode("refund", (_s, ctx) => {
          const ok = ctx.interrupt<boolean>({ action: "refund", amount });
          if (ok) applied.push(amount);
          return { paid: ok ? amount : 0 };
        })
        .addEdge(START, "refund")
        .compile({ checkpointer: saver });
      const threadId = threadName("determinism");
      const r1 = await graph.invoke({}, { threadId });
      amount = 500; // node code is not deterministic: the question changes on re-run
      const events = await collect(
        graph.stream(Command.resume(true), { threadId, streamMode: ["debug"] }),
      );
      const end = events.find((e) => e.type === "end");
      expect(end?.type === "end" && end.result.status).toBe("interrupted");
      expect(applied).toEqual([]);
      const fresh = end?.type === "end" ? end.result.interrupts : [];
      expect(fresh).toHaveLength(1);
      expect(fresh[0]?.id).not.toBe(r1.interrupts[0]?.id);
      expect(fresh[0]?.payload).toEqual({ action: "refund", amount: 500 });
      expect((await saver.getInterrupt(r1.interrupts[0]?.id as never))?.status).toBe("superseded");
      expect(events.some((e) => e.type === "debug" && /superseded/.test(e.message))).toBe(true);
      const done = await graph.resume({ threadId }, Command.resume(true));
      expect(applied).toEqual([500]);
      expect(done.values.paid).toBe(500);
    }),
  );

  it(
    "with determinism off a changed question takes the recorded answer",
    env.withStore(async (saver) => {
      let amount = 50;
      const graph = new StateGraph({ paid: lastValue<number>() })
        .addNode("refund", (_s, ctx) => ({ paid: ctx.interrupt<boolean>({ amount }) ? amount : 0 }))
        .addEdge(START, "refund")
        .compile({ checkpointer: saver, determinism: "off" });
      const threadId = threadName("determinism-off");
      await graph.invoke({}, { threadId });
      amount = 60;
      const done = await graph.resume({ threadId }, Command.resume(true));
      expect(done.values.paid).toBe(60);
    }),
  );
}
