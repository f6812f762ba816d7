/**
 * A prebuilt agent whose model streams: its first turn streams text in pieces, then asks for two
 * tools (`lookup` runs at once, `refund` waits for approval), its token usage and its response
 * id; once the tools answered it streams its answer. The protocol layers' token tests run it.
 */
import { agent, tool, type Checkpointer, type ModelDelta } from "@rein/core";
import { z } from "zod";

/** The model's deltas of one turn: 0 asks for the tools, any later one answers. */
async function* streamed(turn: number): AsyncIterable<ModelDelta> {
  await Promise.resolve();
  if (turn === 0) {
    yield { type: "text", text: "Let me " };
    yield { type: "text", text: "check." };
    yield { type: "tool-call", call: { id: "call_look", name: "lookup", args: { order: "A-1" } } };
    yield { type: "tool-call", call: { id: "call_pay", name: "refund", args: { amount: 50 } } };
    yield { type: "usage", usage: { inputTokens: 12, outputTokens: 7, totalTokens: 19 } };
    yield { type: "id", id: "resp_first" };
    return;
  }
  yield { type: "text", text: "Refunded " };
  yield { type: "text", text: "50." };
  yield { type: "id", id: "resp_second" };
}

/** The agent, named `streamer`, on `store`. */
export function streamingAgent(store: Checkpointer) {
  const lookup = tool({
    name: "lookup",
    description: "Look an order up.",
    schema: z.object({ order: z.string() }),
    run: (args) => ({ order: args.order, paid: 50 }),
  });
  const refund = tool({
    name: "refund",
    description: "Refund an amount.",
    schema: z.object({ amount: z.number() }),
    run: (args) => `refunded ${args.amount}`,
  });
  return agent({
    model: (messages) => streamed(messages.some((m) => m.role === "tool") ? 1 : 0),
    tools: [lookup, refund],
    approve: ["refund"],
    checkpointer: store,
    name: "streamer",
  });
}
