/**
 * Contracts of SPEC §2 on parallel questions: every interrupt() call is its own interrupt, whether
 * the calls are concurrent in one task or spread over parallel tasks, and answering one re-runs
 * exactly its task.
 */
import { it, expect } from "vitest";
import {
  append,
  Command,
  interrupt,
  InvalidInputError,
  lastValue,
  Send,
  START,
  StateGraph,
} from "../../index.ts";
import { fanOut } from "./graphs.ts";
import { Counter, threadName, type RuntimeEnv } from "./harness.ts";

/** Contracts of concurrent and parallel interrupts. */
export function parallelInterruptContracts(env: RuntimeEnv): void {
  it(
    "concurrent interrupt() calls in one task each get their own id and can be answered on their own",
    env.withStore(async (saver) => {
      const executed: string[] = [];
      const tools = ["search", "refund", "email"];
      const graph = new StateGraph({ results: lastValue<string[]>(() => []) })
        .addNode("tools", async () => {
          const outcomes = await Promise.all(
            tools.map(async (tool) => {
              await Promise.resolve();
              const decision = interrupt<string>({ tool });
              executed.push(`${tool}:${decision}`);
              return `${tool}=${decision}`;
            }),
          );
          return { results: outcomes };
        })
        .addEdge(START, "tools")
        .compile({ checkpointer: saver });
      const threadId = threadName("parallel-calls");
      const r1 = await graph.invoke({}, { threadId });
      expect(r1.interrupts).toHaveLength(3);
      expect(new Set(r1.interrupts.map((i) => i.id)).size).toBe(3);
      expect(r1.interrupts.map((i) => (i.payload as { tool: string }).tool).sort()).toEqual(
        [...tools].sort(),
      );
      const byTool = new Map(
        r1.interrupts.map((i) => [(i.payload as { tool: string }).tool, i.id]),
      );
      const r2 = await graph.resume(
        { threadId },
        Command.resumeMap({ [byTool.get("refund") as string]: "yes" }),
      );
      expect(r2.status).toBe("interrupted");
      expect(r2.interrupts.map((i) => i.id).sort()).toEqual(
        [byTool.get("search"), byTool.get("email")].sort(),
      );
      const r3 = await graph.resume(
        { threadId },
        Command.resumeMap({
          [byTool.get("search") as string]: "s",
          [byTool.get("email") as string]: "e",
        }),
      );
      expect(r3.status).toBe("done");
      expect(r3.values.results).toEqual(["search=s", "refund=yes", "email=e"]);
    }),
  );

  it(
    "keyed interrupts keep their answers when concurrent calls arrive in another order on the re-run",
    env.withStore(async (saver) => {
      let run = 0;
      const graph = new StateGraph({ results: lastValue<string[]>(() => []) })
        .addNode("tools", async (_s, ctx) => {
          run += 1;
          const calls = run === 1 ? ["a", "b"] : ["b", "a"];
          const results = await Promise.all(
            calls.map((id) =>
              Promise.resolve().then(
                () => `${id}=${ctx.interrupt<string>({ call: id }, { key: id })}`,
              ),
            ),
          );
          return { results: results.sort() };
        })
        .addEdge(START, "tools")
        .compile({ checkpointer: saver });
      const threadId = threadName("keys");
      const r1 = await graph.invoke({}, { threadId });
      const ids = new Map(r1.interrupts.map((i) => [(i.payload as { call: string }).call, i.id]));
      const done = await graph.resume(
        { threadId },
        Command.resumeMap({ [ids.get("a") as string]: "A", [ids.get("b") as string]: "B" }),
      );
      expect(done.status).toBe("done");
      expect(done.values.results).toEqual(["a=A", "b=B"]);
    }),
  );

  it(
    "two interrupt() calls with one key in one task are an error",
    env.withStore(async (saver) => {
      const graph = new StateGraph({ x: lastValue<number>() })
        .addNode("n", (_s, ctx) => {
          try {
            ctx.interrupt("one", { key: "k" });
          } catch {
            // the first call pauses; the second must be refused
          }
          ctx.interrupt("two", { key: "k" });
        })
        .addEdge(START, "n")
        .compile({ checkpointer: saver });
      const result = await graph.invoke({}, { threadId: threadName("dupkey") });
      // The first call still pauses the task (a caught interrupt pauses), and the second call's
      // error is what the node threw; the pending interrupt is the first one only.
      expect(result.status).toBe("interrupted");
      expect(result.interrupts.map((i) => i.payload)).toEqual(["one"]);
      let thrown: unknown;
      const probe = new StateGraph({ x: lastValue<number>() })
        .addNode("n", async (_s, ctx) => {
          await Promise.allSettled([
            Promise.resolve().then(() => ctx.interrupt("a", { key: "same" })),
          ]);
          try {
            ctx.interrupt("b", { key: "same" });
          } catch (error) {
            thrown = error;
          }
        })
        .addEdge(START, "n")
        .compile({ checkpointer: saver });
      await probe.invoke({}, { threadId: threadName("dupkey2") });
      expect(thrown).toBeInstanceOf(InvalidInputError);
    }),
  );

  it(
    "answering one of K parallel interrupts re-runs exactly that task",
    env.withStore(async (saver) => {
      const counter = new Counter();
      const graph = fanOut(saver, counter);
      const threadId = threadName("k-parallel");
      const items = ["a", "b", "c", "d", "e"];
      const r1 = await graph.invoke({ items }, { threadId });
      expect(r1.interrupts).toHaveLength(5);
      expect(counter.total()).toBe(5);
      const target = r1.interrupts.find((i) => (i.payload as { item: string }).item === "c");
      const r2 = await graph.resume(
        { threadId },
        Command.resumeMap({ [target?.id as string]: "C" }),
      );
      expect(counter.of("c")).toBe(2);
      for (const other of ["a", "b", "d", "e"]) expect(counter.of(other), `task ${other}`).toBe(1);
      expect(r2.interrupts.map((i) => i.id).sort()).toEqual(
        r1.interrupts
          .filter((i) => i !== target)
          .map((i) => i.id)
          .sort(),
      );
      let remaining = r2.interrupts;
      while (remaining.length > 0) {
        const next = remaining[0];
        const r = await graph.resume(
          { threadId },
          Command.resumeMap({ [next?.id as string]: "ok" }),
        );
        remaining = r.interrupts;
        if (r.status === "done")
          expect(r.values.out.sort(), `done after answering ${next?.id}`).toEqual([
            "a:ok",
            "b:ok",
            "c:C",
            "d:ok",
            "e:ok",
          ]);
      }
      expect(counter.total()).toBe(10);
    }),
  );
}

/**
 * A `Send` argument is the task's input each time the task runs, as it was sent: node code that
 * changes the object it got changes nothing later calls see, also when this process keeps the
 * paused step's head between calls instead of reading it again.
 */
export function sendArgumentContracts(env: RuntimeEnv): void {
  it(
    "a node that changes its Send argument before pausing gets the argument as sent on every re-run",
    env.withStore(async (saver) => {
      const seen: string[] = [];
      const graph = new StateGraph({
        items: lastValue<string[]>(() => []),
        out: append<string>(),
      })
        .addNode("fan", () => ({}))
        .addNode("work", (arg: { item: string; notes: string[] }) => {
          seen.push(`${arg.item}:${JSON.stringify(arg.notes)}`);
          arg.notes.push("changed by the node");
          const first = interrupt<string>({ item: arg.item, question: 1 });
          const second = interrupt<string>({ item: arg.item, question: 2 });
          return { out: `${arg.item}=${first}/${second}` };
        })
        .addEdge(START, "fan")
        .addConditionalEdges(
          "fan",
          (s) => s.items.map((item) => new Send("work", { item, notes: [] })),
          ["work"],
        )
        .compile({ checkpointer: saver });
      const threadId = threadName("send-argument");
      const r1 = await graph.invoke({ items: ["a", "b"] }, { threadId });
      const ofItem = (r: typeof r1, item: string): string =>
        r.interrupts.find((i) => (i.payload as { item: string }).item === item)?.id ?? "";
      // Two answers to a's questions, each re-running a from the same paused head.
      const r2 = await graph.invoke(Command.resumeMap({ [ofItem(r1, "a")]: "x" }), { threadId });
      const r3 = await graph.invoke(Command.resumeMap({ [ofItem(r2, "a")]: "y" }), { threadId });
      expect(r3.status).toBe("interrupted");
      expect(seen.filter((s) => s.startsWith("a:"))).toEqual(["a:[]", "a:[]", "a:[]"]);
      const r4 = await graph.invoke(Command.resumeMap({ [ofItem(r3, "b")]: "p" }), { threadId });
      const r5 = await graph.invoke(Command.resumeMap({ [ofItem(r4, "b")]: "q" }), { threadId });
      expect(r5.status).toBe("done");
      expect(seen.filter((s) => s.startsWith("b:"))).toEqual(["b:[]", "b:[]", "b:[]"]);
      expect([...r5.values.out].sort()).toEqual(["a=x/y", "b=p/q"]);
    }),
  );
}
