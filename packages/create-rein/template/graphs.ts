/**
 * The graphs this app serves (`npm start` runs `rein serve --graphs ./graphs.ts`): a support
 * agent that can refund an order and asks a person before it does. Reviewers answer in the
 * approval console at http://127.0.0.1:8080 (accept, edit the amount, or reply instead).
 */
import { fromAiSdk } from "@rein/ai-sdk";
import { agent, tool, type Checkpointer } from "@rein/core";
import { z } from "zod";
import { scriptedModel } from "./scripted-model.ts";

// The model. The scripted one needs no key; for a real one, install its provider and swap this
// line, e.g. `npm install @ai-sdk/openai`, then: const model = openai("gpt-4o");
const model = scriptedModel();

/** Stands in for your payment provider; the idempotency key lets it drop a duplicate request. */
export const payments: { orderId: string; amount: number; key: string }[] = [];

const issueRefund = tool({
  name: "issue_refund",
  description: "Refund an order to the customer's card.",
  // The amount's unit lets the console show it as money.
  schema: z.object({
    orderId: z.string(),
    amount: z.number().positive().max(500).meta({ unit: "USD" }),
  }),
  // Money sent cannot be taken back: the console asks for an explicit confirmation.
  irreversible: true,
  run: ({ orderId, amount }, { idempotencyKey }) => {
    payments.push({ orderId, amount, key: idempotencyKey });
    return `refunded $${amount} on order ${orderId}`;
  },
});

export const graphs = {
  support: (store: Checkpointer) =>
    agent({
      model: fromAiSdk(model),
      tools: [issueRefund],
      approve: ["issue_refund"],
      checkpointer: store,
    }),
};
