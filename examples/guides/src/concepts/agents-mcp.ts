import { fileURLToPath } from "node:url";
import { Command, MemorySaver, agent, textOf, type Model } from "@rein/core";
import { connectMcp } from "@rein/mcp";

// A server process over stdio (this one is TypeScript, so it starts under tsx);
// { url: "https://tools.example.com/mcp" } connects over streamable HTTP instead.
const server = fileURLToPath(new URL("./agents-mcp-server.ts", import.meta.url));
const mcp = await connectMcp(
  { command: process.execPath, args: ["--import", import.meta.resolve("tsx"), server] },
  { approve: ["delete_*", "send_*"] },
);

// Stands in for a real model: deletes the wrong ticket, then reports the result.
const model: Model = (messages, { tools }) => {
  const last = messages.at(-1);
  if (last?.role === "tool") return { role: "assistant", content: textOf(last) };
  console.log("tools:", tools.map((t) => t.name).join(", "));
  const call = { id: "c1", name: "delete_ticket", args: { id: "T-1" } };
  return { role: "assistant", content: "", toolCalls: [call] };
};

const graph = agent({ model, tools: mcp.tools, checkpointer: new MemorySaver() });
const thread = { threadId: "t1" };
const paused = await graph.invoke({ messages: [{ role: "user", content: "Clean up" }] }, thread);
const [ask] = paused.interrupts;
console.log(paused.status, JSON.stringify((ask?.payload as { args: unknown }).args));

// The reviewer points it at the right ticket; the server runs it once.
const edit = { type: "edit", args: { id: "T-2" } };
const done = await graph.invoke(Command.resumeMap({ [ask!.id]: edit }), thread);
console.log(done.values.messages.at(-1)?.content);
await mcp.close();
