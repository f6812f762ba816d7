import { describe, expect, it } from "vitest";
import { MemorySaver } from "../checkpoint/memory.ts";
import type { Checkpointer } from "../checkpoint/types.ts";
import { Command } from "../graph/command.ts";
import { END, START } from "../graph/definition.ts";
import { StateGraph } from "../graph/state-graph.ts";
import { lastValue } from "../channels.ts";
import { asRunId } from "../ids.ts";

/** A store that counts the calls made to it, by method. */
function counted(): { store: Checkpointer; calls: Map<string, number>; reset: () => void } {
  const calls = new Map<string, number>();
  const inner = new MemorySaver();
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== "function" || typeof name !== "string") return value;
      return (...args: unknown[]) => {
        calls.set(name, (calls.get(name) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, calls, reset: () => calls.clear() };
}

// What a pause and its resume cost in store calls: each record is read once, and an answer needs
// no read of its run (the store resumes it). Every call is a round trip on a networked store.
describe("store calls of a pause and its resume", () => {
  it("read the head once, never re-read a missing head, and answer without reading the run", async () => {
    const { store, calls, reset } = counted();
    const graph = new StateGraph({ n: lastValue<number>(() => 0), answer: lastValue<string>() })
      .addNode("prepare", (s) => ({ n: s.n + 1 }))
      .addNode("ask", (_s, ctx) => ({ answer: ctx.interrupt<string>("ok?") }))
      .addEdge(START, "prepare")
      .addEdge("prepare", "ask")
      .addEdge("ask", END)
      .compile({ checkpointer: store });

    const paused = await graph.invoke({ n: 1 }, { threadId: "t1" });
    expect(paused.status).toBe("interrupted");
    expect(calls.get("getThreadHead")).toBe(1);
    // The new thread has no head: that read is not made a second time.
    expect(calls.get("getCheckpoint") ?? 0).toBe(0);
    expect(calls.get("getRun") ?? 0).toBe(0);

    reset();
    const done = await graph.resume({ threadId: "t1" }, Command.resume("yes"));
    expect(done.status).toBe("done");
    expect(done.values).toEqual({ n: 2, answer: "yes" });
    expect(calls.get("answerInterrupts")).toBe(1);
    expect(calls.get("getThreadHead")).toBe(1);
    expect(calls.get("getRun") ?? 0).toBe(0);
    expect(calls.get("getCheckpoint") ?? 0).toBe(0);
    expect((await store.getRun(asRunId(done.runId)))?.status).toBe("done");
  });
});
