import { describe, expect, it } from "vitest";
import { append } from "../channels.ts";
import { MemorySaver } from "../checkpoint/memory.ts";
import { Command, Send } from "../graph/command.ts";
import { START } from "../graph/definition.ts";
import { StateGraph } from "../api/state-graph.ts";
import { jsonSerializer, type Serializer } from "../serde.ts";
import { RUN_RESULT_INTERRUPT_LIMIT } from "../types.ts";

/** Bytes the store decodes, counted by wrapping its serializer. */
function countingSerializer(): { serializer: Serializer; decoded: () => number } {
  let bytes = 0;
  return {
    serializer: {
      serialize: (value) => jsonSerializer.serialize(value),
      deserialize: (text) => {
        bytes += text.length;
        return jsonSerializer.deserialize(text);
      },
    },
    decoded: () => bytes,
  };
}

/** Bytes decoded by the second answer among `k` paused parallel tasks, and its run result. */
async function secondAnswer(k: number) {
  const { serializer, decoded } = countingSerializer();
  const graph = new StateGraph({ out: append<string>() })
    .addNode("fan", () => ({}))
    .addNode("work", (arg: { i: number }, ctx) => ({
      out: `${arg.i}:${ctx.interrupt<string>(arg)}`,
    }))
    .addEdge(START, "fan")
    .addConditionalEdges("fan", () => Array.from({ length: k }, (_, i) => new Send("work", { i })))
    .compile({ checkpointer: new MemorySaver({ serializer }) });
  const threadId = `width-${k}`;
  const first = await graph.invoke({}, { threadId });
  const ids = first.interrupts.map((i) => i.id);
  await graph.invoke(Command.resumeMap({ [ids[0] as string]: "a" }), { threadId });
  const before = decoded();
  const result = await graph.invoke(Command.resumeMap({ [ids[1] as string]: "b" }), { threadId });
  return { bytes: decoded() - before, result };
}

// SPEC: answering one interrupt reads what that answer needs. With the paused step's head kept
// by the process and the run result's page decoded only when read, what one answer decodes does
// not depend on how many sibling tasks stay paused.
describe("what an answer decodes among many paused tasks", () => {
  it("is the same at 10 and at 300 paused tasks, until the caller reads the page", async () => {
    const narrow = await secondAnswer(10);
    const wide = await secondAnswer(300);
    expect(narrow.result.pendingCount).toBe(8);
    expect(wide.result.pendingCount).toBe(298);
    expect(wide.bytes).toBeGreaterThan(0);
    // Interrupt ids are fixed-width hashes and the answers are of equal length: the two answers'
    // records differ by a few digits of the items at most.
    expect(Math.abs(wide.bytes - narrow.bytes)).toBeLessThan(64);
    // Reading the page decodes it then: the oldest page of the pending questions.
    expect(wide.result.interrupts).toHaveLength(RUN_RESULT_INTERRUPT_LIMIT);
    expect(narrow.result.interrupts.map((i) => (i.payload as { i: number }).i)).toEqual([
      2, 3, 4, 5, 6, 7, 8, 9,
    ]);
  });
});
