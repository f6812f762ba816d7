// LangGraph.js: createReactAgent({ llm, tools, checkpointer }) with a human-in-the-loop step before
// the tools. Rein: agent({ model, tools, approve }), here the one getting-started/agent.ts serves.
import { Command, MemorySaver, RunConfig } from "@rein/core";
import { graphs } from "./getting-started/agent.ts";

const graph = graphs.support(new MemorySaver());
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
