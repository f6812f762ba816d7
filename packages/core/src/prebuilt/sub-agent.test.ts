import { describe, expect, it } from "vitest";
import { append, lastValue } from "../channels.ts";
import { MemorySaver } from "../checkpoint/memory.ts";
import { Command } from "../graph/command.ts";
import { END, START, StateGraph } from "../api/state-graph.ts";
import { agent } from "./agent.ts";
import { textOf, type Message, type Model } from "./messages.ts";
import { lastAssistantText, subAgent } from "./sub-agent.ts";
import { tool } from "./tool-node.ts";

/** A model that calls `act` once, then answers with what it saw. */
function worker(name: string): Model {
  return (messages) =>
    messages.some((m) => m.role === "tool")
      ? { role: "assistant", content: `${name} done (${messages.length} messages seen)` }
      : {
          role: "assistant",
          content: "",
          toolCalls: [{ id: `${name}-1`, name: "act", args: { who: name } }],
        };
}

function setup() {
  const saver = new MemorySaver();
  const child = (name: string) =>
    agent({
      name: `${name}_agent`,
      model: worker(name),
      tools: [tool({ name: "act", run: (args) => args })],
      approve: ["act"],
      checkpointer: saver,
    });
  const forChild = (s: { ticket: string }) => ({
    messages: [{ role: "user", content: s.ticket } as Message],
  });
  const graph = new StateGraph({
    ticket: lastValue<string>(),
    messages: append<Message>(),
    summaries: append<string>(),
  })
    .addNode(
      "left",
      subAgent(child("left"), {
        input: forChild,
        output: (v) => ({ summaries: lastAssistantText(v.messages) }),
      }),
    )
    .addNode(
      "right",
      subAgent(child("right"), {
        input: forChild,
        output: (v) => ({ summaries: lastAssistantText(v.messages) }),
      }),
    )
    .addEdge(START, "left")
    .addEdge(START, "right")
    .addEdge("left", END)
    .addEdge("right", END)
    .compile({ name: "parent", checkpointer: saver });
  return { graph, saver };
}

describe("subAgent", () => {
  it("gives each sub-agent its own conversation and the parent only their outputs", async () => {
    const { graph } = setup();
    const paused = await graph.invoke({ ticket: "order 1042", messages: [] }, { threadId: "s1" });
    expect(paused.status).toBe("interrupted");
    // Both children paused at once, each in its own run.
    expect(new Set(paused.interrupts.map((i) => i.runId)).size).toBe(2);
    expect(paused.interrupts.map((i) => i.namespace[0]).sort()).toEqual(["left", "right"]);
    const done = await graph.invoke(
      Command.resumeMap(
        Object.fromEntries(paused.interrupts.map((i) => [i.id, { type: "accept" }])),
      ),
      { threadId: "s1" },
    );
    expect(done.status).toBe("done");
    expect(done.values.messages).toEqual([]);
    // Each child saw only its own 3 messages (user, tool call, tool result): no interleaving.
    expect([...done.values.summaries].sort()).toEqual([
      "left done (3 messages seen)",
      "right done (3 messages seen)",
    ]);
  });

  it("lastAssistantText reads the last assistant message's text parts", () => {
    expect(
      lastAssistantText([
        { role: "assistant", content: "first" },
        {
          role: "assistant",
          content: [
            { type: "reasoning", text: "hm" },
            { type: "text", text: "second" },
          ],
        },
        { role: "user", content: "thanks" },
      ]),
    ).toBe("second");
    expect(textOf({ content: [{ type: "image", url: "https://x/y.png" }] })).toBe("");
  });
});
