import { describe, expect, expectTypeOf, it } from "vitest";
import { append, ephemeral, lastValue, reducer } from "../channels.ts";
import { InvalidGraphError } from "../errors.ts";
import { Command, Send } from "../graph/command.ts";
import { END, START, StateGraph } from "./state-graph.ts";

const schema = { n: lastValue<number>(() => 0), log: append<string>() };

describe("StateGraph compile-time checks", () => {
  it("rejects an edge to an unknown node", () => {
    const graph = new StateGraph(schema)
      .addNode("a", () => ({}))
      .addEdge(START, "a")
      .addEdge("a", "missing");
    expect(() => graph.compile()).toThrow(InvalidGraphError);
    expect(() => graph.compile()).toThrow(/unknown node "missing"/);
  });

  it("rejects an edge from an unknown node", () => {
    const graph = new StateGraph(schema)
      .addNode("a", () => ({}))
      .addEdge(START, "a")
      .addEdge("ghost", "a");
    expect(() => graph.compile()).toThrow(/unknown node "ghost"/);
  });

  it("rejects a node that no path reaches", () => {
    const graph = new StateGraph(schema)
      .addNode("a", () => ({}))
      .addNode("island", () => ({}))
      .addEdge(START, "a");
    expect(() => graph.compile()).toThrow(/"island" is unreachable/);
  });

  it("accepts a node reached only through a declared Command goto", () => {
    const graph = new StateGraph(schema)
      .addNode("a", () => new Command({ goto: "b" }), { ends: ["b"] })
      .addNode("b", () => ({}))
      .addEdge(START, "a");
    expect(() => graph.compile()).not.toThrow();
  });

  it("rejects a duplicate node name, a reserved name and a name that is a channel", () => {
    const graph = new StateGraph(schema).addNode("a", () => ({}));
    expect(() => graph.addNode("a", () => ({}))).toThrow(/already defined/);
    expect(() => graph.addNode(START, () => ({}))).toThrow(/reserved/);
    expect(() => graph.addNode("n", () => ({}))).toThrow(/name of a state channel/);
  });

  it("rejects a graph without an entry edge", () => {
    expect(() => new StateGraph(schema).addNode("a", () => ({})).compile()).toThrow(/no entry/);
  });

  it("rejects a path map naming an unknown node", () => {
    const graph = new StateGraph(schema)
      .addNode("a", () => ({}))
      .addEdge(START, "a")
      .addConditionalEdges("a", () => "x", { x: "nowhere" });
    expect(() => graph.compile()).toThrow(/unknown node "nowhere"/);
  });
});

describe("state types are inferred", () => {
  it("types node input, updates and invoke results from the schema", async () => {
    const graph = new StateGraph({
      count: lastValue<number>(() => 0),
      items: append<string>(),
      total: reducer(
        (a: number, b: number) => a + b,
        () => 0,
      ),
    })
      .addNode("a", (state) => {
        expectTypeOf(state.count).toEqualTypeOf<number>();
        expectTypeOf(state.items).toEqualTypeOf<string[]>();
        return { items: "x", total: 2 };
      })
      .addEdge(START, "a")
      .compile();
    const result = await graph.invoke({ count: 1, items: ["a"] });
    expectTypeOf(result.values.count).toEqualTypeOf<number>();
    expectTypeOf(result.values.items).toEqualTypeOf<string[]>();
    expect(result.values).toEqual({ count: 1, items: ["a", "x"], total: 2 });
  });
});

describe("channels and control flow", () => {
  it("two writes to a last-value channel in one step fail the run naming both nodes", async () => {
    const graph = new StateGraph(schema)
      .addNode("fan", () => ({}))
      .addNode("left", () => ({ n: 1 }))
      .addNode("right", () => ({ n: 2 }))
      .addEdge(START, "fan")
      .addEdge("fan", "left")
      .addEdge("fan", "right")
      .compile();
    const result = await graph.invoke({});
    expect(result.status).toBe("error");
    expect(result.error?.code).toBe("invalid_update");
    expect(result.error?.message).toContain('"left"');
    expect(result.error?.message).toContain('"right"');
  });

  it("append, custom reducer and ephemeral channels fold one step's writes", async () => {
    const graph = new StateGraph({
      log: append<string>(),
      sum: reducer(
        (a: number, b: number) => a + b,
        () => 10,
      ),
      flash: ephemeral<string>(),
      seen: lastValue<string | undefined>(),
    })
      .addNode("fan", () => ({ flash: "hello" }))
      .addNode("a", (s) => ({ log: ["a1", "a2"], sum: 1, seen: s.flash }))
      .addNode("b", () => ({ log: "b", sum: 5 }))
      .addNode("after", (s) => ({ log: `flash=${String(s.flash)}` }))
      .addEdge(START, "fan")
      .addEdge("fan", "a")
      .addEdge("fan", "b")
      .addEdge("a", "after")
      .compile();
    const result = await graph.invoke({});
    expect(result.values.log).toEqual(["a1", "a2", "b", "flash=undefined"]);
    expect(result.values.sum).toBe(16);
    expect(result.values.seen).toBe("hello");
  });

  it("conditional edges route on the state, and Send fans out one task per input (map-reduce)", async () => {
    const graph = new StateGraph({
      words: lastValue<string[]>(() => []),
      lengths: append<number>(),
      route: lastValue<string>(),
    })
      .addNode("split", () => ({}))
      .addNode("measure", (input: { word: string }) => ({ lengths: input.word.length }))
      .addNode("short", () => ({ route: "short" }))
      .addEdge(START, "split")
      .addConditionalEdges(
        "split",
        (s) =>
          s.words.length === 0 ? "short" : s.words.map((word) => new Send("measure", { word })),
        ["short", "measure"],
      )
      .compile();
    expect((await graph.invoke({ words: ["a", "abc", "ab"] })).values.lengths).toEqual([1, 3, 2]);
    expect((await graph.invoke({ words: [] })).values.route).toBe("short");
  });

  it("Command({ goto, update }) updates state and chooses the next node", async () => {
    const graph = new StateGraph(schema)
      .addNode(
        "decide",
        (s) => new Command({ update: { n: s.n + 1 }, goto: s.n > 0 ? "big" : "small" }),
        { ends: ["big", "small"] },
      )
      .addNode("big", () => ({ log: "big" }))
      .addNode("small", () => ({ log: "small" }))
      .addEdge(START, "decide")
      .compile();
    expect((await graph.invoke({ n: 5 })).values).toEqual({ n: 6, log: ["big"] });
    expect((await graph.invoke({ n: 0 })).values).toEqual({ n: 1, log: ["small"] });
  });

  it("a node reached twice in one step by edges runs once", async () => {
    let runs = 0;
    const graph = new StateGraph(schema)
      .addNode("a", () => ({}))
      .addNode("b", () => ({}))
      .addNode("join", () => {
        runs += 1;
        return {};
      })
      .addEdge(START, "a")
      .addEdge(START, "b")
      .addEdge("a", "join")
      .addEdge("b", "join")
      .addEdge("join", END)
      .compile();
    await graph.invoke({});
    expect(runs).toBe(1);
  });

  it("writing an unknown channel fails the run with a clear error", async () => {
    const graph = new StateGraph(schema)
      .addNode("a", () => ({ nope: 1 }) as never)
      .addEdge(START, "a")
      .compile();
    const result = await graph.invoke({});
    expect(result.status).toBe("error");
    expect(result.error?.message).toMatch(/unknown channel "nope"/);
  });
});
