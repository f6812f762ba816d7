import { Command, MemorySaver, agent, textOf, tool, type Message } from "@rein/core";
import { z } from "zod";

// The "model" asks for one refund; once it has the result, it shows the steering note it got.
function model(messages: readonly Message[]): Message {
  const note = messages.find((m) => m.role === "user" && m.steering);
  if (note) return { role: "assistant", content: `noted: ${textOf(note)}` };
  const args = { amount: 20 };
  return { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "refund", args }] };
}

const graph = agent({
  model,
  tools: [tool({ name: "refund", schema: z.object({ amount: z.number() }), run: () => "ok" })],
  approve: ["refund"],
  checkpointer: new MemorySaver(),
});
const thread = { threadId: "t1" };
const paused = await graph.invoke({ messages: [{ role: "user", content: "Refund" }] }, thread);

const done = await graph.resume(
  thread,
  Command.resumeMap(
    { [paused.interrupts[0]!.id]: { type: "edit", args: { amount: 10 } } },
    { steering: "Pro rata: only one mug broke.", actor: "alice@example.com" },
  ),
);
// The steering note sits right after the tool result, as a marked user message.
const note = done.values.messages.at(-2);
if (note?.role === "user") console.log(note.content, note.steering?.actor);
console.log(done.values.messages.at(-1)?.content);
