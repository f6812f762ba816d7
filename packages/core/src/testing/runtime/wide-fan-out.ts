/**
 * The 1,000-children contract: targeted resume stays exact with a wide fan-out. Heavier than the
 * others, so it has a longer timeout.
 */
import { it, expect } from "vitest";
import { Command, RUN_RESULT_INTERRUPT_LIMIT, type Interrupt, type ThreadId } from "../../index.ts";
import { orchestrator, taskOf } from "./graphs.ts";
import { Counter, threadName, type RuntimeEnv } from "./harness.ts";

/** A thousand children take a while on a networked store. */
const TIMEOUT_MS = 180_000;

/** Contracts of a wide fan-out. */
export function wideFanOutContracts(env: RuntimeEnv): void {
  it(
    "with 1,000 paused children, answering one runs that child's task only",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const graph = orchestrator(saver, counter);
      const threadId = threadName("wide");
      const tasks = Array.from({ length: 1000 }, (_, i) => `t${i}`);
      const r1 = await graph.invoke({ tasks }, { threadId });
      expect(r1.pendingCount).toBe(1000);
      expect(r1.interrupts).toHaveLength(RUN_RESULT_INTERRUPT_LIMIT);
      expect(counter.total()).toBe(1 + 2000);
      const pending = await saver.getThreadInterrupts(threadId as ThreadId, "pending");
      const target = pending.find((i) => taskOf(i) === "t500") as Interrupt;
      const r2 = await graph.resumeTargeted(
        { runId: target.runId, namespace: ["agent"] },
        Command.resume("yes"),
      );
      expect(r2.pendingCount).toBe(999);
      // Exactly one more node body ran: the answered child's approve node.
      expect(counter.total()).toBe(1 + 2000 + 1);
      expect(counter.of("research_agent:approve:t500")).toBe(2);
      expect(counter.of("research_agent:approve:t499")).toBe(1);
    }),
    TIMEOUT_MS,
  );
}
