/**
 * Contracts of deadlines: durable timers resolve expired interrupts with `onTimeout`, also in a
 * process started after the deadline passed, and the deadline timer does it without anyone calling.
 */
import { it, expect, vi } from "vitest";
import { lastValue, START, StateGraph, type ThreadId } from "../../index.ts";
import { threadName, type RuntimeEnv } from "./harness.ts";

/** Contracts of interrupt deadlines. */
export function deadlineContracts(env: RuntimeEnv): void {
  it(
    "an expired interrupt is answered with onTimeout's value by the next process that looks",
    env.withStore(async (saver) => {
      const build = () =>
        new StateGraph({ decision: lastValue<string>() })
          .addNode("ask", (_s, ctx) => ({
            decision: ctx.interrupt<string>(
              { q: "ship?" },
              { timeout: "1s", onTimeout: "auto-reject" },
            ),
          }))
          .addEdge(START, "ask")
          .compile({ checkpointer: saver });
      const threadId = threadName("deadline");
      const r1 = await build().invoke({}, { threadId });
      expect(r1.status).toBe("interrupted");
      expect(await build().resolveExpiredInterrupts(new Date())).toBe(0);
      // A new graph object stands for a process started after the deadline passed.
      const resolved = await build().resolveExpiredInterrupts(new Date(Date.now() + 2000));
      expect(resolved).toBe(1);
      const state = await build().getState({ threadId });
      expect(state.values.decision).toBe("auto-reject");
      expect(state.next).toEqual([]);
      const audit = await saver.listAudit({ threadId: threadId as ThreadId });
      expect(audit.items.find((a) => a.action === "timeout")?.actor).toBe("system:timer");
    }),
  );

  it(
    "an expired interrupt with onTimeout cancel ends its task without writes",
    env.withStore(async (saver) => {
      const graph = new StateGraph({
        decision: lastValue<string>(() => "none"),
        after: lastValue<boolean>(() => false),
      })
        .addNode("ask", (_s, ctx) => ({
          decision: ctx.interrupt<string>({ q: "?" }, { timeout: 10, onTimeout: "cancel" }),
        }))
        .addNode("next", () => ({ after: true }))
        .addEdge(START, "ask")
        .addEdge("ask", "next")
        .compile({ checkpointer: saver });
      const threadId = threadName("deadline-cancel");
      const r1 = await graph.invoke({}, { threadId });
      await graph.resolveExpiredInterrupts(new Date(Date.now() + 1000));
      expect((await saver.getInterrupt(r1.interrupts[0]?.id as never))?.status).toBe("cancelled");
      const state = await graph.getState({ threadId });
      expect(state.values.decision).toBe("none");
    }),
  );

  it(
    "startDeadlineTimer resolves an interrupt once its deadline passes, without anyone calling",
    env.withStore(async (saver) => {
      const graph = new StateGraph({ decision: lastValue<string>() })
        .addNode("ask", (_s, ctx) => ({
          decision: ctx.interrupt<string>({ q: "?" }, { timeout: "200ms", onTimeout: "expired" }),
        }))
        .addEdge(START, "ask")
        .compile({ checkpointer: saver, name: "timed" });
      const threadId = threadName("timer");
      await graph.invoke({}, { threadId });
      const timer = graph.startDeadlineTimer({ intervalMs: 50 });
      try {
        expect(await timer.ready).toBe(0);
        await vi.waitFor(
          async () => {
            if ((await graph.getState({ threadId })).values.decision !== "expired")
              throw new Error("the timer never resolved the interrupt");
          },
          { timeout: 10_000, interval: 50 },
        );
      } finally {
        timer.stop();
      }
      expect((await graph.getState({ threadId })).next).toEqual([]);
    }),
  );
}
