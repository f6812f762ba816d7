import {
  Command,
  MemorySaver,
  NotAllowedError,
  RunConfig,
  START,
  StateGraph,
  lastValue,
} from "@rein/core";

const graph = new StateGraph({ decision: lastValue<string>() })
  .addNode("ask", (_s, ctx) => ({
    decision: ctx.interrupt<string>(
      { action: "refund", amount: 120 },
      {
        approvers: { groups: ["support"] },
        remind: "1h", // or a list: ["1h", "2h"] for repeated reminders
        escalate: { after: "4h", approvers: { groups: ["managers"] } },
        timeout: "1d",
        onTimeout: "rejected",
      },
    ),
  }))
  .addEdge(START, "ask")
  .compile({ checkpointer: new MemorySaver(), name: "refunds" });

const thread = RunConfig.thread("refund-1042");
const paused = await graph.invoke({}, thread);
console.log(paused.interrupts[0]?.escalation?.stage);

const maria = { subject: "maria", groups: ["managers"] };
const answer = () =>
  graph.resume(thread, Command.resume("approve", { actor: "maria", principal: maria }));
try {
  await answer();
} catch (error) {
  if (error instanceof NotAllowedError) console.log(error.details.rule);
}

// Any process's deadline timer takes each step once it is due: here, as if 5 hours had passed.
const later = new Date(Date.now() + 5 * 3_600_000);
await graph.resolveExpiredInterrupts(later);
const [question] = (await graph.listInterrupts({ threadId: "refund-1042" })).items;
console.log(question?.escalation?.stage, question?.approval?.policy.groups);
console.log((await answer()).values.decision);
