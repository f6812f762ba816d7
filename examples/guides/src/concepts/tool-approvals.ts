import { Command, agent, textOf, tool, type Message } from "@rein/core";
import { SqliteSaver } from "@rein/sqlite";
import { z } from "zod";

// Payments by idempotency key: a retried request with the same key pays nothing twice.
const paid = new Map<string, number>();
const pay = (amount: number, idempotencyKey: string) => {
  paid.set(idempotencyKey, amount);
  return `paid $${amount}`;
};

// Stands in for your LLM (a real one returns a promise): asks for a refund of 50, then
// repeats what the tool answered.
function callYourLlm(messages: readonly Message[]): Message {
  // Steering notes arrive as user messages after the tool result: look past them.
  const last = messages.findLast((m) => !(m.role === "user" && m.steering));
  if (last?.role === "tool") return { role: "assistant", content: textOf(last) };
  return {
    role: "assistant",
    content: "",
    toolCalls: [{ id: "call-1", name: "refund", args: { amount: 50 } }],
  };
}

const graph = agent({
  model: (messages) => callYourLlm(messages),
  tools: [
    tool({
      name: "refund",
      schema: z.object({ amount: z.number() }),
      run: ({ amount }, { idempotencyKey }) => pay(amount, idempotencyKey),
    }),
  ],
  approve: ["refund"],
  checkpointer: SqliteSaver.open("rein.db"),
});
const paused = await graph.invoke(
  { messages: [{ role: "user", content: "refund order 1042" }] },
  { threadId: "t1" },
);
const done = await graph.invoke(
  Command.resumeMap({ [paused.interrupts[0]!.id]: { type: "edit", args: { amount: 25 } } }),
  { threadId: "t1" },
);
console.log(done.values.messages.at(-1)?.content, "| payments:", [...paid.values()]);
