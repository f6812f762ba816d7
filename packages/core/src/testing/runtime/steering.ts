/**
 * Contracts of SPEC §3 on steering: an instruction is recorded apart from the answer, audited
 * with its actor, and read by node code in its scope only.
 */
import { it, expect } from "vitest";
import { Command, type Interrupt, type ThreadId } from "../../index.ts";
import { orchestrator, taskOf } from "./graphs.ts";
import { Counter, threadName, type RuntimeEnv } from "./harness.ts";

/** Contracts of steering. */
export function steeringContracts(env: RuntimeEnv): void {
  it(
    "steering is recorded apart from the answer and read by node code in its scope",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const graph = orchestrator(saver, counter);
      const threadId = threadName("steer");
      const r1 = await graph.invoke({ tasks: ["a", "b"] }, { threadId });
      const a = r1.interrupts.find((i) => taskOf(i) === "a") as Interrupt;
      const b = r1.interrupts.find((i) => taskOf(i) === "b") as Interrupt;
      const r2 = await graph.resumeTargeted(
        { runId: a.runId, namespace: ["agent"] },
        Command.resume("approved", { steering: "Refund half only", actor: "alice@example.com" }),
      );
      const steering = await saver.listSteering(threadId as ThreadId);
      expect(steering).toHaveLength(1);
      expect(steering[0]).toMatchObject({
        runId: a.runId,
        text: "Refund half only",
        actor: "alice@example.com",
        namespace: ["agent"],
      });
      // The parent step commits when its last task ends; the child's own state shows the result.
      const state = await graph.getState({ threadId }, { subgraphs: true });
      const childA = state.subgraphs?.find((s) => s.runId === a.runId);
      expect(childA?.status).toBe("done");
      expect(childA?.values.log).toContain(
        "research_agent a: approved (steered: Refund half only)",
      );
      // The sibling is out of scope: it neither ran nor sees the instruction.
      expect(r2.interrupts.map((i) => i.id)).toEqual([b.id]);
      // Steering without resuming reaches the next execution in that scope.
      await graph.steer({ runId: b.runId, namespace: ["agent"] }, "Be brief", { actor: "bob" });
      expect(counter.of("research_agent:approve:b")).toBe(1);
      await graph.resumeTargeted({ runId: b.runId, namespace: ["agent"] }, Command.resume("ok"));
      const done = await graph.getState({ threadId });
      expect(done.values.log).toContain("research_agent b: ok (steered: Be brief)");
      const audit = await saver.listAudit({ threadId: threadId as ThreadId });
      expect(audit.items.filter((x) => x.action === "steer").map((x) => x.actor)).toEqual([
        "alice@example.com",
        "bob",
      ]);
      expect(audit.items.filter((x) => x.action === "answer").map((x) => x.actor)).toEqual([
        "alice@example.com",
        "anonymous",
      ]);
    }),
  );
}
