import { END, START, StateGraph, decideInterrupts, lastValue } from "@rein/core";
import { SqliteSaver } from "@rein/sqlite";

const store = SqliteSaver.open("bulk.db");
const graph = new StateGraph({ to: lastValue<string>(), sent: lastValue<unknown>() })
  .addNode("send", (s, ctx) => ({ sent: ctx.interrupt({ action: "send_email", to: s.to }) }))
  .addEdge(START, "send")
  .addEdge("send", END)
  .compile({ checkpointer: store, name: "emails" });

const ids: string[] = [];
for (const to of ["ann@example.com", "ben@example.com", "cy@example.com"]) {
  const paused = await graph.invoke({ to }, { threadId: `email-${to}-${Date.now()}` });
  ids.push(paused.interrupts[0]!.id);
}
// All or nothing: one interrupt that is not pending or not allowed refuses the whole decision.
const decided = await decideInterrupts(store, {
  ids,
  value: { type: "accept" },
  actor: "alice",
  principal: { subject: "alice" },
});
console.log(decided.map((d) => d.status));
// The answers are stored and the runs left running: each continues on its next call.
for (const d of decided) console.log((await graph.invoke(null, { threadId: d.threadId })).status);
