/**
 * Contracts of static interrupts: `interruptBefore` / `interruptAfter`, at compile time or per
 * run, pause a graph (or a sub-agent, by selector path) without editing node code.
 */
import { it, expect } from "vitest";
import {
  append,
  Command,
  InvalidGraphError,
  InvalidInputError,
  START,
  StateGraph,
  type ThreadId,
} from "../../index.ts";
import { chainAB, orchestrator } from "./graphs.ts";
import { Counter, rejection, threadName, type RuntimeEnv } from "./harness.ts";

/** Contracts of interruptBefore and interruptAfter. */
export function staticInterruptContracts(env: RuntimeEnv): void {
  it(
    "interruptBefore holds only the matching task; the other tasks of the step run and keep their writes",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const graph = new StateGraph({ log: append<string>() })
        .addNode("fork", () => ({}))
        .addNode("safe", () => {
          counter.hit("safe");
          return { log: "safe" };
        })
        .addNode("risky", () => {
          counter.hit("risky");
          return { log: "risky" };
        })
        .addEdge(START, "fork")
        .addEdge("fork", "safe")
        .addEdge("fork", "risky")
        .compile({ checkpointer: saver, interruptBefore: ["risky"] });
      const threadId = threadName("before");
      const r1 = await graph.invoke({}, { threadId });
      expect(r1.status).toBe("interrupted");
      expect(r1.interrupts).toHaveLength(1);
      expect(r1.interrupts[0]).toMatchObject({ kind: "before", node: "risky" });
      expect(counter.of("safe")).toBe(1);
      expect(counter.of("risky")).toBe(0);
      const state = await graph.getState({ threadId });
      expect(state.tasks.find((t) => t.node === "safe")?.status).toBe("done");
      const done = await graph.resume({ threadId }, Command.resume());
      expect(done.status).toBe("done");
      expect(counter.of("safe")).toBe(1);
      expect(counter.of("risky")).toBe(1);
      expect(done.values.log).toEqual(["safe", "risky"]);
    }),
  );

  it(
    "interruptAfter and per-run selectors pause without editing node code",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const build = (interruptAfter?: string[]) =>
        chainAB(saver, counter, interruptAfter ? { interruptAfter } : {});
      const threadId = threadName("after");
      const r1 = await build(["a"]).invoke({}, { threadId });
      expect(r1.status).toBe("interrupted");
      expect(r1.interrupts[0]).toMatchObject({ kind: "after", node: "a" });
      expect(r1.values.log).toEqual(["a"]);
      expect(counter.of("b")).toBe(0);
      const done = await build(["a"]).resume({ threadId }, Command.resume());
      expect(done.values.log).toEqual(["a", "b"]);
      const perRun = threadName("per-run");
      const r2 = await build().invoke({}, { threadId: perRun, interruptBefore: ["b"] });
      expect(r2.interrupts[0]).toMatchObject({ kind: "before", node: "b" });
      expect(counter.of("b")).toBe(1);
      const done2 = await build().resume({ threadId: perRun }, Command.resume());
      expect(done2.values.log).toEqual(["a", "b"]);
      // After the last node too: the run waits before it is done.
      const last = threadName("after-last");
      const r3 = await build(["b"]).invoke({}, { threadId: last });
      expect(r3.status).toBe("interrupted");
      expect(r3.interrupts[0]).toMatchObject({ kind: "after", node: "b" });
      expect(r3.values.log).toEqual(["a", "b"]);
      const done3 = await build(["b"]).resume({ threadId: last }, Command.resume());
      expect(done3.status).toBe("done");
      expect((await saver.getRun(done3.runId))?.status).toBe("done");
    }),
  );

  it(
    "a selector that names no node is refused at compile time and per run, listing the nodes, and stores nothing",
    env.withStore(async (saver) => {
      const counter = new Counter();
      for (const option of ["interruptBefore", "interruptAfter"] as const) {
        let compiled: unknown;
        try {
          chainAB(saver, counter, { [option]: ["a", "wiat"] });
        } catch (error) {
          compiled = error;
        }
        expect(compiled, option).toBeInstanceOf(InvalidGraphError);
        expect((compiled as InvalidGraphError).details).toMatchObject({
          option,
          selector: "wiat",
          nodes: ["a", "b"],
        });
      }
      const graph = orchestrator(saver, counter);
      const threadId = threadName("selector-typo");
      const cases = [
        ["interruptBefore", "wiat", "supervisor", ["plan", "agent", "report"]],
        ["interruptAfter", "agent/wiat", "research_agent", ["work", "approve"]],
        ["interruptBefore", "agent/wiat/*", "research_agent", ["work", "approve"]],
      ] as const;
      for (const [option, selector, graphName, nodes] of cases) {
        const error = await rejection(
          graph.invoke({ tasks: ["a"] }, { threadId, [option]: [selector] }),
        );
        expect(error, selector).toBeInstanceOf(InvalidInputError);
        expect((error as InvalidInputError).message, selector).toContain(nodes.join(", "));
        expect((error as InvalidInputError).details, selector).toMatchObject({
          option,
          selector,
          graph: graphName,
          nodes,
        });
      }
      // The same check, without a call: for a host that queues the run and starts it later.
      expect(() => graph.checkSelectors({ interruptAfter: ["agent/wiat"] })).toThrow(
        InvalidInputError,
      );
      expect(() => graph.checkSelectors({ interruptBefore: ["agent/work"] })).not.toThrow();
      expect(counter.of("plan")).toBe(0);
      expect(await saver.getThread(threadId as ThreadId)).toBeUndefined();
      expect(await saver.listRuns(threadId as ThreadId)).toEqual([]);
      // Paths into a subgraph and wildcards that reach a node are accepted; so is a path below
      // a function node, whose code may invoke a graph the definition does not show.
      const valid = ["agent/work", "*/approve", "agent/*", "*", "plan/tools"];
      const r1 = await graph.invoke({ tasks: ["a"] }, { threadId, interruptAfter: valid });
      expect(r1.interrupts).toMatchObject([{ kind: "after", node: "plan", namespace: [] }]);
    }),
  );

  it(
    "a per-run selector path pauses before a node inside a sub-agent, without editing its code",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const graph = orchestrator(saver, counter);
      const threadId = threadName("selector-path");
      const r1 = await graph.invoke({ tasks: ["a"] }, { threadId, interruptBefore: ["*/work"] });
      expect(r1.status).toBe("interrupted");
      expect(r1.interrupts).toHaveLength(1);
      expect(r1.interrupts[0]).toMatchObject({
        kind: "before",
        node: "work",
        namespace: ["agent"],
      });
      expect(counter.of("research_agent:work:a")).toBe(0);
      const r2 = await graph.resume({ threadId }, Command.resume());
      expect(counter.of("research_agent:work:a")).toBe(1);
      expect(r2.interrupts).toMatchObject([
        { kind: "dynamic", node: "approve", namespace: ["agent"] },
      ]);
      const done = await graph.resume({ threadId }, Command.resume("ok"));
      expect(done.status).toBe("done");
    }),
  );
}
