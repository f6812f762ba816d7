// LangGraph.js: createReactAgent({ llm, tools, checkpointer }) with a human-in-the-loop step before
// the tools. Rein: agent({ model, tools, approve }).
import { fromAiSdk } from "@rein/ai-sdk";
import { agent, Command, MemorySaver, RunConfig, tool } from "@rein/core";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";

const issueRefund = tool({
  name: "issue_refund",
  description: "Refund an order to the customer's card.",
  schema: z.object({ orderId: z.string(), amount: z.number().positive().max(500) }),
  irreversible: true, // the console asks for an explicit confirmation
  run: ({ orderId, amount }) => `refunded $${amount} on order ${orderId}`,
});

// A scripted model (the AI SDK's mock): it asks for a refund, then reports the tool's result.
// A real one is fromAiSdk(openai("gpt-4o")) with `@ai-sdk/openai`.
const model = new MockLanguageModelV3({
  doGenerate: ({ prompt }) => {
    const result = prompt
      .flatMap((m) => (m.role === "tool" ? m.content : []))
      .find((part) => part.type === "tool-result");
    const text = result?.output.type === "text" ? result.output.value : "";
    const call = { orderId: "1042", amount: 80 };
    return Promise.resolve({
      content: result
        ? [{ type: "text", text: `Done: ${text}` }]
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

const graph = agent({
  model: fromAiSdk(model),
  tools: [issueRefund],
  approve: ["issue_refund"],
  checkpointer: new MemorySaver(),
  name: "support",
});
const thread = RunConfig.thread("t-2");
const paused = await graph.invoke(
  { messages: [{ role: "user", content: "Order 1042 arrived broken." }] },
  thread,
);
// LangGraph.js: state.tasks[0].interrupts[0].value. Rein: one interrupt per approved tool call,
// each with its own id, its call and the JSON Schema an edit must match.
const [approval] = paused.interrupts;
console.log(paused.status, (approval?.payload as { action: string }).action);

// LangGraph.js: new Command({ resume: ... }) answered every pending interrupt at once; here an
// answer names the one it decides, and carries who decided it.
const done = await graph.resume(
  thread,
  Command.resumeMap({ [approval!.id]: { type: "accept" } }, { actor: "lead@example.com" }),
);
console.log(done.status, done.values.messages.at(-1)?.content);
