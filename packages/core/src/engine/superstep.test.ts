import { describe, expect, it } from "vitest";
import { append, lastValue } from "../channels.ts";
import { MemorySaver } from "../checkpoint/memory.ts";
import { MissingCheckpointerError, MissingThreadIdError } from "../errors.ts";
import { asTaskId, taskIdFor, type ThreadId } from "../ids.ts";
import { Command } from "../graph/command.ts";
import { END, START, StateGraph } from "../api/state-graph.ts";
import { applyWrites, MAX_CHAIN, SNAPSHOT_FACTOR } from "./barrier.ts";
import type { StreamEvent } from "./events.ts";

async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

function chain(saver?: MemorySaver) {
  return new StateGraph({ log: append<string>() })
    .addNode("a", () => ({ log: "a" }))
    .addNode("b", () => ({ log: "b" }))
    .addNode("c", () => ({ log: "c" }))
    .addEdge(START, "a")
    .addEdge("a", "b")
    .addEdge("b", "c")
    .addEdge("c", END)
    .compile(saver ? { checkpointer: saver } : {});
}

describe("supersteps", () => {
  it("runs the tasks of one step concurrently and applies their writes at the barrier", async () => {
    const started: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const graph = new StateGraph({ log: append<string>(), seen: lastValue<string[]>() })
      .addNode("fan", () => ({}))
      .addNode("left", async (s) => {
        started.push("left");
        if (started.length === 2) release();
        await gate;
        return { log: `left saw ${s.log.length}` };
      })
      .addNode("right", async (s) => {
        started.push("right");
        if (started.length === 2) release();
        await gate;
        return { log: `right saw ${s.log.length}` };
      })
      .addEdge(START, "fan")
      .addEdge("fan", "left")
      .addEdge("fan", "right")
      .compile();
    const result = await graph.invoke({});
    // Both started before either finished (else the gate would never open), and neither saw
    // the other's write: writes apply at the barrier.
    expect(result.values.log).toEqual(["left saw 0", "right saw 0"]);
  });

  it("commits one checkpoint per step", async () => {
    const saver = new MemorySaver();
    const graph = chain(saver);
    await graph.invoke({}, { threadId: "steps" });
    const history = await graph.getStateHistory({ threadId: "steps" });
    // input checkpoint + one per node
    expect(history.map((h) => h.next)).toEqual([[], ["c"], ["b"], ["a"]]);
    expect(history.map((h) => h.values.log.length)).toEqual([3, 2, 1, 0]);
  });

  it("derives task ids from (thread, run, namespace, step, node, trigger)", async () => {
    const saver = new MemorySaver();
    const graph = chain(saver);
    const result = await graph.invoke({}, { threadId: "ids" });
    const history = await graph.getStateHistory({ threadId: "ids" });
    const firstTask = history.at(-1)?.tasks[0];
    expect(firstTask?.id).toBe(taskIdFor("ids", result.runId, [], 0, "a", "edge"));
    expect(taskIdFor("ids", result.runId, [], 0, "a", "edge")).not.toBe(
      taskIdFor("other", result.runId, [], 0, "a", "edge"),
    );
  });

  it("a finished task of a failed step is not run again when the run continues", async () => {
    const saver = new MemorySaver();
    const runs = { ok: 0, flaky: 0 };
    let fail = true;
    const graph = new StateGraph({ log: append<string>() })
      .addNode("fan", () => ({}))
      .addNode("ok", () => {
        runs.ok += 1;
        return { log: "ok" };
      })
      .addNode("flaky", () => {
        runs.flaky += 1;
        if (fail) throw new Error("upstream timeout");
        return { log: "flaky" };
      })
      .addEdge(START, "fan")
      .addEdge("fan", "ok")
      .addEdge("fan", "flaky")
      .compile({ checkpointer: saver });
    const failed = await graph.invoke({}, { threadId: "pw" });
    expect(failed.status).toBe("error");
    expect(failed.error).toMatchObject({ message: "upstream timeout", node: "flaky" });
    const stateAfterFailure = await graph.getState({ threadId: "pw" });
    expect(stateAfterFailure.checkpointId).toBe(failed.checkpointId);
    expect(stateAfterFailure.tasks.find((t) => t.node === "ok")?.status).toBe("done");
    fail = false;
    const done = await graph.invoke(null, { threadId: "pw" });
    expect(done.status).toBe("done");
    expect(runs).toEqual({ ok: 1, flaky: 2 });
    expect(done.values.log).toEqual(["ok", "flaky"]);
  });

  it("retries a failing node per its policy", async () => {
    let attempts = 0;
    const graph = new StateGraph({ out: lastValue<number>() })
      .addNode(
        "flaky",
        () => {
          attempts += 1;
          if (attempts < 3) throw new Error("try again");
          return { out: attempts };
        },
        { retry: { maxAttempts: 3, initialIntervalMs: 1 } },
      )
      .addEdge(START, "flaky")
      .compile();
    expect((await graph.invoke({})).values.out).toBe(3);
    attempts = -10;
    const exhausted = await graph.invoke({});
    expect(exhausted.status).toBe("error");
    expect(attempts).toBe(-7);
  });

  it("does not retry errors the policy excludes", async () => {
    let attempts = 0;
    const graph = new StateGraph({ out: lastValue<number>() })
      .addNode(
        "n",
        () => {
          attempts += 1;
          throw new TypeError("bug");
        },
        {
          retry: {
            maxAttempts: 5,
            initialIntervalMs: 1,
            retryOn: (e) => !(e instanceof TypeError),
          },
        },
      )
      .addEdge(START, "n")
      .compile();
    await graph.invoke({});
    expect(attempts).toBe(1);
  });

  it("cancellation reaches node code through ctx.signal and ends the run cancelled", async () => {
    const controller = new AbortController();
    let sawAbort = false;
    let secondRan = false;
    const graph = new StateGraph({ out: lastValue<string>() })
      .addNode("slow", async (_s, ctx) => {
        await new Promise<void>((resolve) => {
          ctx.signal.addEventListener("abort", () => {
            sawAbort = true;
            resolve();
          });
          controller.abort("user pressed stop");
        });
        return { out: "slow" };
      })
      .addNode("second", () => {
        secondRan = true;
        return {};
      })
      .addEdge(START, "slow")
      .addEdge("slow", "second")
      .compile({ checkpointer: new MemorySaver() });
    const result = await graph.invoke({}, { threadId: "cancel", signal: controller.signal });
    expect(result.status).toBe("cancelled");
    expect(sawAbort).toBe(true);
    expect(secondRan).toBe(false);
  });

  it("a caller's abort ends the run cancelled before the next step even when no node looks at ctx.signal", async () => {
    const controller = new AbortController();
    let secondRan = false;
    const graph = new StateGraph({ out: lastValue<string>() })
      .addNode("first", () => {
        controller.abort("user pressed stop");
        return { out: "first" };
      })
      .addNode("second", () => {
        secondRan = true;
        return { out: "second" };
      })
      .addEdge(START, "first")
      .addEdge("first", "second")
      .compile({ checkpointer: new MemorySaver() });
    const result = await graph.invoke({}, { threadId: "cancel-unread", signal: controller.signal });
    expect(result.status).toBe("cancelled");
    expect(secondRan).toBe(false);
  });

  it("stops a loop without an exit at the recursion limit", async () => {
    const graph = new StateGraph({ n: lastValue<number>(() => 0) })
      .addNode("loop", (s) => ({ n: s.n + 1 }))
      .addEdge(START, "loop")
      .addEdge("loop", "loop")
      .compile({ recursionLimit: 5 });
    const result = await graph.invoke({});
    expect(result.status).toBe("error");
    expect(result.error?.code).toBe("recursion_limit");
    expect(result.values.n).toBe(5);
  });

  it("interrupt without a checkpointer is a MissingCheckpointerError; durable calls need a thread id", async () => {
    const graph = new StateGraph({ x: lastValue<number>() })
      .addNode("ask", (_s, ctx) => {
        ctx.interrupt("?");
      })
      .addEdge(START, "ask");
    await expect(graph.compile().invoke({})).rejects.toBeInstanceOf(MissingCheckpointerError);
    await expect(
      graph.compile({ checkpointer: new MemorySaver() }).invoke({}),
    ).rejects.toBeInstanceOf(MissingThreadIdError);
  });
});

describe("stream modes", () => {
  it("yields values, updates, custom, tasks, checkpoints and debug events as asked", async () => {
    const graph = new StateGraph({ log: append<string>() })
      .addNode("a", (_s, ctx) => {
        ctx.emit({ progress: 0.5 });
        return { log: "a" };
      })
      .addEdge(START, "a")
      .compile({ checkpointer: new MemorySaver() });
    const events = await collect(
      graph.stream(
        {},
        { threadId: "s", streamMode: ["values", "updates", "custom", "tasks", "checkpoints"] },
      ),
    );
    const types = events.map((e) => e.type);
    expect(types).toContain("custom");
    expect(events.find((e) => e.type === "custom")).toMatchObject({
      node: "a",
      data: { progress: 0.5 },
    });
    expect(events.find((e) => e.type === "updates")).toMatchObject({
      node: "a",
      update: { log: "a" },
    });
    expect(
      events.filter((e) => e.type === "tasks").map((e) => (e.type === "tasks" ? e.phase : null)),
    ).toEqual(["start", "end"]);
    expect(events.filter((e) => e.type === "checkpoints")).toHaveLength(2);
    expect(events.at(-2)).toMatchObject({ type: "values", values: { log: ["a"] } });
    expect(events.at(-1)?.type).toBe("end");
    const onlyUpdates = await collect(graph.stream({}, { threadId: "s2", streamMode: "updates" }));
    expect(onlyUpdates.map((e) => e.type)).toEqual(["updates", "end"]);
  });

  it("an interrupt is an event of its own, whatever the modes", async () => {
    const graph = new StateGraph({ x: lastValue<number>() })
      .addNode("ask", (_s, ctx) => {
        ctx.interrupt({ q: 1 });
      })
      .addEdge(START, "ask")
      .compile({ checkpointer: new MemorySaver() });
    const events = await collect(graph.stream({}, { threadId: "i", streamMode: "updates" }));
    expect(events.map((e) => e.type)).toEqual(["interrupt", "end"]);
    expect(events[0]).toMatchObject({
      type: "interrupt",
      interrupt: { node: "ask", payload: { q: 1 } },
    });
  });
});

describe("state, history and time travel", () => {
  it("updateState as a node writes a new checkpoint and follows that node's edges", async () => {
    const saver = new MemorySaver();
    const graph = new StateGraph({ log: append<string>(), draft: lastValue<string>() })
      .addNode("write", () => ({ draft: "v1", log: "write" }))
      .addNode("review", (_s, ctx) => {
        ctx.interrupt("ok?");
        return { log: "reviewed" };
      })
      .addNode("publish", (s) => ({ log: `publish ${s.draft}` }))
      .addEdge(START, "write")
      .addEdge("write", "review")
      .addEdge("review", "publish")
      .compile({ checkpointer: saver });
    await graph.invoke({}, { threadId: "u" });
    // A paused thread refuses a state edit until the pause is answered or cancelled.
    await expect(graph.updateState({ threadId: "u" }, { draft: "v2" })).rejects.toThrow(
      /waiting on 1 interrupt/,
    );
    await graph.invoke({}, { threadId: "u", onPending: "cancel" });
    const fresh = await graph.invoke({}, { threadId: "u2" });
    expect(fresh.status).toBe("interrupted");
    await graph.resume({ threadId: "u2" }, Command.resume(true));
    const { checkpointId } = await graph.updateState(
      { threadId: "u2" },
      { draft: "v2" },
      { asNode: "review" },
    );
    const state = await graph.getState({ threadId: "u2" });
    expect(state.checkpointId).toBe(checkpointId);
    expect(state.next).toEqual(["publish"]);
    const done = await graph.invoke(null, { threadId: "u2" });
    expect(done.values.log.at(-1)).toBe("publish v2");
  });

  it("runs from a past checkpoint as a fork, leaving the original history intact", async () => {
    const saver = new MemorySaver();
    let suffix = "first";
    const graph = new StateGraph({ log: append<string>() })
      .addNode("a", () => ({ log: "a" }))
      .addNode("b", () => ({ log: `b-${suffix}` }))
      .addEdge(START, "a")
      .addEdge("a", "b")
      .compile({ checkpointer: saver });
    await graph.invoke({}, { threadId: "f" });
    const history = await graph.getStateHistory({ threadId: "f" });
    const beforeB = history.find((h) => h.next[0] === "b");
    suffix = "second";
    const forked = await graph.invoke(null, {
      threadId: "f",
      checkpointId: beforeB?.checkpointId as string,
    });
    expect(forked.values.log).toEqual(["a", "b-second"]);
    const original = await graph.getState({
      threadId: "f",
      checkpointId: history[0]?.checkpointId as string,
    });
    expect(original.values.log).toEqual(["a", "b-first"]);
    const all = await graph.getStateHistory({ threadId: "f" });
    expect(all.length).toBeGreaterThan(history.length);
    expect(all.filter((h) => h.source === "fork")).toHaveLength(1);
  });

  it("getStateHistory pages with limit and before", async () => {
    const saver = new MemorySaver();
    const graph = chain(saver);
    await graph.invoke({}, { threadId: "h" });
    const page1 = await graph.getStateHistory({ threadId: "h" }, { limit: 2 });
    const page2 = await graph.getStateHistory(
      { threadId: "h" },
      { limit: 2, before: page1.at(-1)?.checkpointId as string },
    );
    expect(page1).toHaveLength(2);
    expect(page2).toHaveLength(2);
    expect(new Set([...page1, ...page2].map((p) => p.checkpointId)).size).toBe(4);
    expect(await saver.listCheckpoints("h" as ThreadId, "")).toHaveLength(4);
  });
});

describe("subgraph events and history", () => {
  it("events of a child run carry its namespace", async () => {
    const saver = new MemorySaver();
    const child = new StateGraph({ log: append<string>() })
      .addNode("inner", (_s, ctx) => {
        ctx.emit("from inside");
        return { log: "inner" };
      })
      .addEdge(START, "inner")
      .compile({ checkpointer: saver, name: "child" });
    const graph = new StateGraph({ log: append<string>() })
      .addNode("outer", child)
      .addEdge(START, "outer")
      .compile({ checkpointer: saver, name: "parent" });
    const events = await collect(
      graph.stream({}, { threadId: "ns", streamMode: ["updates", "custom"] }),
    );
    expect(events.find((e) => e.type === "custom")).toMatchObject({
      namespace: ["outer"],
      node: "inner",
      data: "from inside",
    });
    expect(
      events
        .filter((e) => e.type === "updates")
        .map((e) => (e.type === "updates" ? [e.namespace, e.node] : null)),
    ).toEqual([
      [["outer"], "inner"],
      [[], "outer"],
    ]);
    expect((await graph.getState({ threadId: "ns" })).values.log).toEqual(["inner"]);
  });

  it("interrupts and steering are visible in history", async () => {
    const saver = new MemorySaver();
    const graph = new StateGraph({ answer: lastValue<string>() })
      .addNode("ask", (_s, ctx) => ({ answer: ctx.interrupt<string>("?") }))
      .addEdge(START, "ask")
      .compile({ checkpointer: saver });
    const r1 = await graph.invoke({}, { threadId: "hist" });
    await graph.resume(
      { threadId: "hist" },
      Command.resume("yes", { steering: "be nice", actor: "ann" }),
    );
    const history = await graph.getStateHistory({ threadId: "hist" });
    const paused = history.find((h) => h.checkpointId === r1.checkpointId);
    expect(paused?.interrupts).toMatchObject([{ id: r1.interrupts[0]?.id, status: "answered" }]);
    expect(paused?.steering).toMatchObject([{ text: "be nice", actor: "ann" }]);
  });
});

describe("append channels are stored as deltas", () => {
  function recording(saver: MemorySaver): { kind: string; items: number; bytes: number }[] {
    const stored: { kind: string; items: number; bytes: number }[] = [];
    const commit = saver.commitStep.bind(saver);
    saver.commitStep = (step) => {
      for (const blob of step.blobs)
        if (blob.channel === "messages")
          stored.push({
            kind: blob.kind,
            items: (blob.value as unknown[]).length,
            bytes: JSON.stringify(blob.value).length,
          });
      return commit(step);
    };
    return stored;
  }

  it("each step stores only what it appended, snapshots stay within a constant times the payload, and every checkpoint reads back whole", async () => {
    const saver = new MemorySaver();
    const stored = recording(saver);
    const text = (turn: number): string => `m${turn}:${"x".repeat(1000)}`;
    const graph = new StateGraph({ messages: append<string>(), turn: lastValue<number>(() => 0) })
      .addNode("say", (s) => ({ messages: text(s.turn), turn: s.turn + 1 }))
      .addEdge(START, "say")
      .addConditionalEdges("say", (s) => (s.turn < 300 ? "say" : END))
      .compile({ checkpointer: saver, recursionLimit: 400 });
    const result = await graph.invoke({ messages: [text(-1)] }, { threadId: "chat" });
    expect(result.values.messages).toHaveLength(301);
    expect(stored[0]).toMatchObject({ kind: "full", items: 1 });
    expect(stored.filter((b) => b.kind === "delta").every((b) => b.items === 1)).toBe(true);
    const fulls = stored.filter((b) => b.kind === "full");
    // A snapshot only once the deltas since the last one outweigh it: a few, growing sizes.
    expect(fulls.length).toBeGreaterThan(1);
    expect(fulls.length).toBeLessThan(5);
    const payload = JSON.stringify(result.values.messages).length;
    const total = stored.reduce((sum, b) => sum + b.bytes, 0);
    expect(total).toBeLessThan((2 + 1 / SNAPSHOT_FACTOR) * payload);
    const history = await graph.getStateHistory({ threadId: "chat" }, { limit: 400 });
    for (const snapshot of history)
      expect(snapshot.values.messages).toHaveLength(snapshot.values.turn + 1);
    expect(history[0]?.values.messages.slice(-1)).toEqual([text(299)]);
  });

  it("a chain of tiny items is cut at MAX_CHAIN links, whatever its bytes", () => {
    const definition = new StateGraph({ messages: append<number>() })
      .addNode("a", () => ({}))
      .addEdge(START, "a")
      .compile().definition;
    const write = (prev: string) =>
      applyWrites(
        definition,
        { messages: [1] },
        { messages: prev },
        [
          {
            kind: "writes",
            taskId: asTaskId("t"),
            node: "a",
            writes: [["messages", 2]],
            gotos: [],
            sends: [],
          },
        ],
        "c9",
      ).blobs[0];
    const longest = write(`c1~${MAX_CHAIN - 1}~60000`);
    expect(longest?.kind).toBe("delta");
    expect(longest?.version).toMatch(new RegExp(`^c9~${MAX_CHAIN}~599\\d\\d$`));
    expect(write(`c1~${MAX_CHAIN}~60000`)).toMatchObject({ kind: "full", prev: null });
    // Versions of the older depth-only layout keep their rule: a snapshot every 64 versions.
    expect(write("c1~5")).toMatchObject({ kind: "delta", version: "c9~6", prev: "c1~5" });
    const snapshot = write("c1~63");
    expect(snapshot?.kind).toBe("full");
    expect(snapshot?.version).toMatch(/^c9~0~\d+$/);
    expect(write("c1")).toMatchObject({ kind: "delta", version: "c9~1", prev: "c1" });
  });
});
