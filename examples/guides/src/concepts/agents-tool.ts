import { MemorySaver, agent, textOf, tool, type Model } from "@rein/core";
import { z } from "zod";

// Stands in for your payment provider's client; the key lets it drop a duplicate request.
const payments = {
  refund: (args: { orderId: string; amount: number }, idempotencyKey: string) =>
    `refunded $${args.amount} on order ${args.orderId}, key ${idempotencyKey ? "sent" : "none"}`,
};

const issueRefund = tool({
  name: "issue_refund",
  description: "Refund money to the customer's card.",
  schema: z.object({
    orderId: z.string(),
    amount: z.number().positive().max(500),
    reason: z.string(),
  }),
  irreversible: true,
  run: (args, { idempotencyKey }) => payments.refund(args, idempotencyKey),
});

// The model sees each tool as { name, description, parameters: its JSON Schema }.
const model: Model = (messages, { tools }) => {
  // Steering notes arrive as user messages after the tool result: look past them.
  const last = messages.findLast((m) => !(m.role === "user" && m.steering));
  if (last?.role === "tool") return { role: "assistant", content: textOf(last) };
  console.log(tools[0]?.name, "takes", Object.keys(tools[0]?.parameters.properties ?? {}));
  const args = { orderId: "1042", amount: 12, reason: "broken mug" };
  return { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "issue_refund", args }] };
};

const graph = agent({ model, tools: [issueRefund], checkpointer: new MemorySaver() });
const done = await graph.invoke(
  { messages: [{ role: "user", content: "My mug arrived broken" }] },
  { threadId: "t1" },
);
console.log(done.values.messages.at(-1)?.content);
