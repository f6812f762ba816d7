import { fromAiSdk } from "@rein/ai-sdk";
import { agent, tool, type Checkpointer } from "@rein/core";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";

const issueRefund = tool({
  name: "issue_refund",
  description: "Refund an order to the customer's card.",
  schema: z.object({ orderId: z.string(), amount: z.number().positive().max(500) }),
  // Money sent cannot be taken back: the console asks for an explicit confirmation.
  irreversible: true,
  run: ({ orderId, amount }) => `refunded $${amount} on order ${orderId}`,
});

// A scripted model (the AI SDK's mock): it asks for a refund, then reports the tool's result.
// It looks for the result anywhere in the prompt, not in the last message: a reviewer's steering
// note arrives as a user message after the result.
const model = new MockLanguageModelV3({
  doGenerate: ({ prompt }) => {
    const result = prompt
      .flatMap((m) => (m.role === "tool" ? m.content : []))
      .find((part) => part.type === "tool-result");
    const call = { orderId: "1042", amount: 80 };
    return Promise.resolve({
      content: result
        ? [
            {
              type: "text",
              text: `Done: ${result.output.type === "text" ? result.output.value : ""}`,
            },
          ]
        : [
            {
              type: "tool-call",
              toolCallId: "call-1",
              toolName: "issue_refund",
              input: JSON.stringify(call),
            },
          ],
      finishReason: { unified: result ? "stop" : "tool-calls", raw: undefined },
      usage: {
        inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 0, text: 0, reasoning: 0 },
      },
      warnings: [],
    });
  },
});

// What `rein serve --graphs ./agent.ts` serves: name → a factory given the server's store.
// A real model is one line: fromAiSdk(openai("gpt-4o")) with `@ai-sdk/openai`.
export const graphs = {
  support: (store: Checkpointer) =>
    agent({
      model: fromAiSdk(model),
      tools: [issueRefund],
      approve: ["issue_refund"],
      checkpointer: store,
    }),
};
