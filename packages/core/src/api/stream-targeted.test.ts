/**
 * `streamTargeted`: a targeted answer that yields the continued run's events as they happen —
 * the answered child's under its namespace, its sibling untouched — and ends with the result; a
 * stale target ends the iteration with its error before any event.
 */
import { describe, expect, it } from "vitest";
import { append } from "../channels.ts";
import { MemorySaver } from "../checkpoint/memory.ts";
import { Command } from "../graph/command.ts";
import { END, START } from "../graph/definition.ts";
import { StaleTargetError } from "../errors.ts";
import type { StreamEvent } from "../engine/events.ts";
import { StateGraph } from "./state-graph.ts";

describe("streamTargeted", () => {
  it("streams the answered child's run; the sibling does not run; a stale target streams nothing", async () => {
    const store = new MemorySaver();
    const runs = new Map<string, number>();
    const child = (name: string) =>
      new StateGraph({ notes: append<string>() })
        .addNode("ask", (_s, ctx) => {
          runs.set(name, (runs.get(name) ?? 0) + 1);
          return { notes: `${name}: ${ctx.interrupt<string>({ question: name })}` };
        })
        .addEdge(START, "ask")
        .addEdge("ask", END)
        .compile({ checkpointer: store, name });
    const graph = new StateGraph({ notes: append<string>() })
      .addNode("a", child("a"))
      .addNode("b", child("b"))
      .addEdge(START, "a")
      .addEdge(START, "b")
      .addEdge("a", END)
      .addEdge("b", END)
      .compile({ checkpointer: store, name: "parent" });
    const paused = await graph.invoke({}, { threadId: "t1" });
    const question = paused.interrupts.find((i) => i.namespace[0] === "a")!;
    const target = { runId: question.runId, namespace: question.namespace };

    const events: StreamEvent[] = [];
    for await (const event of graph.streamTargeted(target, Command.resume("yes"), {
      threadId: "t1",
      streamMode: ["updates", "values"],
    }))
      events.push(event);
    const updates = events.filter((e) => e.type === "updates");
    expect(updates.map((e) => [e.namespace, e.node, e.update])).toEqual([
      [["a"], "ask", { notes: "a: yes" }],
    ]);
    expect(events.some((e) => e.type === "values" && e.namespace[0] === "a")).toBe(true);
    const end = events.at(-1);
    expect(end?.type).toBe("end");
    expect(end?.type === "end" && end.result.status).toBe("interrupted");
    expect(Object.fromEntries(runs)).toEqual({ a: 2, b: 1 });

    const stale: StreamEvent[] = [];
    await expect(
      (async () => {
        for await (const event of graph.streamTargeted(
          { ...target, interruptId: question.id },
          Command.resume("again"),
          { threadId: "t1", streamMode: ["updates"] },
        ))
          stale.push(event);
      })(),
    ).rejects.toBeInstanceOf(StaleTargetError);
    expect(stale).toEqual([]);
  });
});
