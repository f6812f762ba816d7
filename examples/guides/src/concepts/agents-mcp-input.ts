import { fileURLToPath } from "node:url";
import { Command, MemorySaver, agent, textOf, type Model } from "@rein/core";
import { connectMcp, type McpInputRequest } from "@rein/mcp";

const server = fileURLToPath(new URL("./agents-mcp-input-server.ts", import.meta.url));
const mcp = await connectMcp({
  command: process.execPath,
  args: ["--import", import.meta.resolve("tsx"), server],
});

// Stands in for a real model: asks for the refund, then reports the result.
const model: Model = (messages) => {
  const last = messages.at(-1);
  if (last?.role === "tool") return { role: "assistant", content: textOf(last) };
  const call = { id: "c1", name: "refund_order", args: { order: "1042", amount: 25 } };
  return { role: "assistant", content: "", toolCalls: [call] };
};

const graph = agent({ model, tools: mcp.tools, checkpointer: new MemorySaver() });
const thread = { threadId: "t1" };
const paused = await graph.invoke({ messages: [{ role: "user", content: "Refund 1042" }] }, thread);
// The server's question is a Rein interrupt; its schema checks the answer.
const [ask] = paused.interrupts;
console.log(paused.status, (ask?.payload as McpInputRequest).message);

// The answer is stored like any other; the tool is called again with it, once.
const done = await graph.invoke(Command.resumeMap({ [ask!.id]: { approved: true } }), thread);
console.log(done.values.messages.at(-1)?.content);
await mcp.close();
