import { Command, MemorySaver, RunConfig, agent, textOf, tool, type Message } from "@rein/core";
import { z } from "zod";

const payments: string[] = [];

// A "model" is any function from messages to the next assistant message (a real one calls an
// LLM and returns a promise). This one asks for a refund, then reports what the tool said.
function model(messages: readonly Message[]): Message {
  // Steering notes arrive as user messages after the tool result: look past them.
  const last = messages.findLast((m) => !(m.role === "user" && m.steering));
  if (last?.role === "tool") return { role: "assistant", content: `Done: ${textOf(last)}` };
  return {
    role: "assistant",
    content: "",
    toolCalls: [{ id: "call-1", name: "refund", args: { order: "1042", amount: 80 } }],
  };
}

const refund = tool({
  name: "refund",
  schema: z.object({ order: z.string(), amount: z.number() }),
  // Runs exactly once per approved call; the key lets the payment API drop a duplicate.
  run: ({ order, amount }, { idempotencyKey }) => {
    payments.push(idempotencyKey);
    return `refunded $${amount} on order ${order}`;
  },
});

const graph = agent({
  model,
  tools: [refund],
  approve: ["refund"],
  checkpointer: new MemorySaver(),
});
const thread = RunConfig.thread("support-7");

const paused = await graph.invoke({ messages: [{ role: "user", content: "Refund 1042" }] }, thread);
const request = paused.interrupts[0]!;
console.log("approval asked:", JSON.stringify(request.payload));

// The reviewer lowers the amount: an `edit` decision runs the tool with the edited arguments,
// and the steering note reaches the model on its next turn.
const done = await graph.resume(
  thread,
  Command.resumeMap(
    { [request.id]: { type: "edit", args: { order: "1042", amount: 50 } } },
    { actor: "lead@example.com", steering: "The other $30 goes back as store credit." },
  ),
);
console.log(done.values.messages.at(-1)?.content);
console.log("payments made:", payments.length);
