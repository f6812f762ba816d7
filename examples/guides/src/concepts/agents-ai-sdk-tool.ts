import { fromAiSdkTools } from "@rein/ai-sdk";
import { Command, MemorySaver, agent, textOf, type Model } from "@rein/core";
import { tool } from "ai";
import { z } from "zod";

// Declared the AI SDK way: the same tool works with generateText and with agent().
const tools = fromAiSdkTools({
  send_email: tool({
    description: "Send an email to the customer.",
    inputSchema: z.object({ to: z.email(), body: z.string().min(1) }),
    // true, or a function of the input: (input) => !input.to.endsWith("@example.com")
    needsApproval: true,
    execute: ({ to, body }) => Promise.resolve(`sent to ${to}: ${body}`),
  }),
});

// Stands in for fromAiSdk(openai("gpt-4o")): asks to send once, then reports the result.
const model: Model = (messages) => {
  const last = messages.at(-1);
  if (last?.role === "tool") return { role: "assistant", content: textOf(last) };
  const args = { to: "dana@example.com", body: "Sorry!" };
  return { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "send_email", args }] };
};

const graph = agent({ model, tools, checkpointer: new MemorySaver() });
const thread = { threadId: "t1" };
const paused = await graph.invoke({ messages: [{ role: "user", content: "Apologize" }] }, thread);
const [ask] = paused.interrupts;
console.log(paused.status, (ask?.payload as { action: string }).action);

// execute runs once, with the reviewer's edit.
const body = "Sorry, your refund is on its way.";
const edit = { type: "edit", args: { to: "dana@example.com", body } };
const done = await graph.invoke(Command.resumeMap({ [ask!.id]: edit }), thread);
console.log(done.values.messages.at(-1)?.content);
