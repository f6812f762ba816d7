/**
 * The README example: an agent step that must not run without a person's approval.
 * `npm start` runs it: the run pauses, the pending interrupt is shown, and the answer resumes it.
 */
import {
  Command,
  END,
  MemorySaver,
  RunConfig,
  START,
  StateGraph,
  append,
  lastValue,
} from "@rein/core";

const payments: string[] = []; // the irreversible side effect

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
    // At most once per (thread, task, key), whatever happens to this process afterwards.
    const receipt = await ctx.once("pay", () => {
      payments.push(ctx.idempotencyKey("pay"));
      return `receipt-${payments.length}`;
    });
    return { log: `refund: paid, ${receipt}` };
  })
  .addEdge(START, "plan")
  .addEdge("plan", "refund")
  .addEdge("refund", END)
  .compile({ checkpointer: new MemorySaver() });

const thread = RunConfig.thread(`support-${Date.now()}`);
const paused = await graph.invoke({ request: "order 1042 arrived broken" }, thread);
console.log(
  `run ${paused.status}; waiting on:`,
  paused.interrupts.map((i) => ({ id: i.id, node: i.node, payload: i.payload })),
);

// Minutes or days later, from any process that opens the same store:
const done = await graph.resume(
  thread,
  Command.resume({ approved: true }, { actor: "alice@example.com" }),
);
console.log(`run ${done.status}:`, done.values.log);
