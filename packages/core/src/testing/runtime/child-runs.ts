/**
 * Contracts of SPEC §3 on run trees: a compiled graph used as a node, or invoked from node code,
 * runs as a child run with a deterministic id, its namespace and a link to its parent.
 */
import { it, expect } from "vitest";
import { append, Command, START, StateGraph, type RunId, type ThreadId } from "../../index.ts";
// Not part of the public surface: the suite checks the id scheme of child runs.
import { childRunIdFor } from "../../ids.ts";
import { subAgent, orchestrator } from "./graphs.ts";
import { Counter, threadName, type RuntimeEnv } from "./harness.ts";

/** Contracts of child runs. */
export function childRunContracts(env: RuntimeEnv): void {
  it(
    "a compiled graph added as a node runs as a child run with a deterministic id, its namespace and a parent link",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const graph = orchestrator(saver, counter);
      const threadId = threadName("child");
      const r1 = await graph.invoke({ tasks: ["a"] }, { threadId });
      expect(r1.status).toBe("interrupted");
      const [pending] = r1.interrupts;
      expect(pending?.namespace).toEqual(["agent"]);
      expect(pending?.runId).not.toBe(r1.runId);
      const state = await graph.getState({ threadId }, { subgraphs: true });
      const parentTask = state.tasks.find((t) => t.node === "agent");
      expect(pending?.runId).toBe(childRunIdFor(r1.runId, parentTask?.id as string, 0));
      const runs = await saver.listRuns(threadId as ThreadId);
      const child = runs.find((r) => r.runId === pending?.runId);
      expect(child).toMatchObject({
        parentRunId: r1.runId,
        parentTaskId: parentTask?.id,
        graph: "research_agent",
        namespace: ["agent"],
        status: "interrupted",
      });
      expect(state.subgraphs?.map((s) => [s.subAgentId, s.status])).toEqual([
        [`research_agent:${pending?.runId}`, "interrupted"],
      ]);
      expect(state.subgraphs?.[0]?.tasks[0]?.interrupts.map((i) => i.id)).toEqual([pending?.id]);
    }),
  );

  it(
    "resuming continues the child from its checkpoint: its finished nodes do not run again",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const graph = orchestrator(saver, counter);
      const threadId = threadName("continue");
      await graph.invoke({ tasks: ["a"] }, { threadId });
      const done = await graph.resume({ threadId }, Command.resume("ok"));
      expect(done.status).toBe("done");
      expect(counter.of("research_agent:work:a")).toBe(1);
      expect(counter.of("research_agent:approve:a")).toBe(2);
      expect(done.values.log).toEqual([
        "research_agent worked on a",
        "research_agent a: ok",
        "report of 2",
      ]);
    }),
  );

  it(
    "parallel instances of one subgraph are distinct child runs in the same namespace",
    env.withStore(async (saver) => {
      const graph = orchestrator(saver, new Counter());
      const r1 = await graph.invoke(
        { tasks: ["a", "b", "c"] },
        { threadId: threadName("instances") },
      );
      expect(r1.interrupts).toHaveLength(3);
      expect(new Set(r1.interrupts.map((i) => i.runId)).size).toBe(3);
      for (const i of r1.interrupts) expect(i.namespace, `interrupt ${i.id}`).toEqual(["agent"]);
    }),
  );

  it(
    "a child invoked from node code is a child run of the calling task",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const agent = subAgent(saver, "refund_agent", counter);
      const graph = new StateGraph({ log: append<string>() })
        .addNode("call", async (_s) => {
          const result = await agent.invoke({ task: "r1" });
          return { log: `child said ${result.values.log.at(-1)}` };
        })
        .addEdge(START, "call")
        .compile({ checkpointer: saver, name: "supervisor" });
      const threadId = threadName("invoke-child");
      const r1 = await graph.invoke({}, { threadId });
      expect(r1.interrupts).toHaveLength(1);
      expect(r1.interrupts[0]?.namespace).toEqual(["call"]);
      const done = await graph.resumeTargeted(
        { runId: r1.interrupts[0]?.runId as RunId, namespace: ["call"] },
        Command.resume("yes"),
      );
      expect(done.status).toBe("done");
      expect(done.values.log).toEqual(["child said refund_agent r1: yes"]);
      expect(counter.of("refund_agent:work:r1")).toBe(1);
    }),
  );
}
