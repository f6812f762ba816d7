import { Command, END, RunConfig, START, StateGraph, append, lastValue } from "@rein/core";
import { SqliteSaver } from "@rein/sqlite";

const payments: string[] = []; // stands in for a payment API: the irreversible side effect

const graph = new StateGraph({
  request: lastValue<string>(),
  amount: lastValue<number>(),
  log: append<string>(),
})
  .addNode("plan", (s) => ({ amount: 50, log: `plan: refund $50 for "${s.request}"` }))
  .addNode("refund", async (s, ctx) => {
    // Pauses the run here; on resume the node re-runs from its first line and this returns the answer.
    const decision = ctx.interrupt<{ approved: boolean }>({
      action: "refund",
      args: { amount: s.amount },
      description: `Refund $${s.amount}?`,
    });
    if (!decision.approved) return { log: "refund: rejected" };
    // At least once, with one stable key per attempt series: exactly once against an API that
    // dedupes on ctx.idempotencyKey (a crash between the payment and storing its result pays again).
    const receipt = await ctx.once(
      "pay",
      () => `receipt-${payments.push(ctx.idempotencyKey("pay"))}`,
    );
    return { log: `refund: paid, ${receipt}` };
  })
  .addEdge(START, "plan")
  .addEdge("plan", "refund")
  .addEdge("refund", END)
  .compile({ checkpointer: SqliteSaver.open(".rein/quickstart.db") });

const thread = RunConfig.thread(`support-${Date.now()}`);
const paused = await graph.invoke({ request: "order 1042 arrived broken" }, thread);
console.log(`run ${paused.status}, waiting on:`);
for (const i of paused.interrupts)
  console.log(`  ${i.id} at node "${i.node}": ${JSON.stringify(i.payload)}`);

// Minutes or days later, from any process that opens the same store:
const done = await graph.resume(
  thread,
  Command.resume({ approved: true }, { actor: "alice@example.com" }),
);
console.log(`run ${done.status}:`, done.values.log.join(" | "));
