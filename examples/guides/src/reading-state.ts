import { Command, END, MemorySaver, RunConfig, START, StateGraph, append } from "@rein/core";

const checkpointer = new MemorySaver();
const graph = new StateGraph({ log: append<string>() })
  .addNode("plan", () => ({ log: "planned" }))
  .addNode("approve", (_s, ctx) => ({ log: ctx.interrupt<string>({ question: "Go?" }) }))
  .addEdge(START, "plan")
  .addEdge("plan", "approve")
  .addEdge("approve", END)
  .compile({ checkpointer });

const thread = RunConfig.thread("t-1");
await graph.invoke({}, thread);

// The current state: values, the nodes of the next step and the pending interrupts.
const state = await graph.getState(thread);
console.log("now:", state.values.log, "next:", state.next, "pending:", state.interrupts.length);

await graph.resume(thread, Command.resume("approved", { actor: "alice@example.com" }));

// History: one snapshot per checkpoint, newest first.
for (const snapshot of await graph.getStateHistory(thread))
  console.log(`step ${snapshot.step} (${snapshot.source}):`, snapshot.values.log);

// The audit log: who answered what, oldest first.
const audit = await checkpointer.listAudit({ threadId: state.interrupts[0]!.threadId });
for (const record of audit.items) console.log("audit:", record.action, "by", record.actor);
