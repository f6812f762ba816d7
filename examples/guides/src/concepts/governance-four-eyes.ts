import { Command, END, NotAllowedError, RunConfig, START, StateGraph, lastValue } from "@rein/core";
import { SqliteSaver } from "@rein/sqlite";

const graph = new StateGraph({ amount: lastValue<number>(), decision: lastValue<unknown>() })
  .addNode("approve", (s, ctx) => ({
    decision: ctx.interrupt(
      { action: "refund", amount: s.amount },
      {
        // Over $1,000: two people from finance, and not the person who started the run.
        approvers: { when: { path: "amount", gt: 1000 }, then: { groups: ["finance"], count: 2 } },
      },
    ),
  }))
  .addEdge(START, "approve")
  .addEdge("approve", END)
  .compile({ checkpointer: SqliteSaver.open("governance.db") });

const thread = RunConfig.thread(`refund-${Date.now()}`);
await graph.invoke({ amount: 1450 }, { ...thread, actor: "rita" });

const alice = { subject: "alice", groups: ["finance"] };
const bob = { subject: "bob", groups: ["finance"] };
const approve = (who: typeof alice) =>
  graph.resume(thread, Command.resume({ type: "accept" }, { actor: who.subject, principal: who }));

const first = await approve(alice);
const approval = first.interrupts[0]?.approval;
console.log(first.status, `${approval?.approvals.length} of ${approval?.required}`);
try {
  await approve(alice);
} catch (error) {
  if (error instanceof NotAllowedError) console.log(error.details.rule);
}
console.log((await approve(bob)).status);
