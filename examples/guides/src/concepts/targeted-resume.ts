import { Command, MemorySaver, Send, START, StateGraph, append, lastValue } from "@rein/core";

const checkpointer = new MemorySaver();

const research = new StateGraph({ task: lastValue<string>(), log: append<string>() })
  .addNode("search", (s) => ({ log: `searched ${s.task}` }))
  .addNode("approve", (s, ctx) => ({
    log:
      `${s.task}: ${ctx.interrupt<string>({ action: "publish", args: { task: s.task } })}` +
      ctx.steering.map((x) => ` [${x.text}]`).join(""),
  }))
  .addEdge(START, "search")
  .addEdge("search", "approve")
  .compile({ checkpointer, name: "research_agent" });

const supervisor = new StateGraph({ topics: lastValue<string[]>(), log: append<string>() })
  .addNode("plan", () => ({}))
  .addNode("research", research)
  .addEdge(START, "plan")
  .addConditionalEdges("plan", (s) => s.topics.map((task) => new Send("research", { task })))
  .compile({ checkpointer, name: "supervisor" });

// An interrupt's payload is `unknown` until you say what the node asked with.
const taskOf = (i: { payload: unknown }) => (i.payload as { args: { task: string } }).args.task;

const run = await supervisor.invoke(
  { topics: ["pricing", "refunds", "shipping"] },
  { threadId: "t1" },
);
// Three pending interrupts, one per child run, all in the namespace ["research"].
console.log(
  "pending:",
  run.interrupts.map((i) => i.namespace.join("/")),
);

const refunds = run.interrupts.find((i) => taskOf(i) === "refunds")!;
const after = await supervisor.resumeTargeted(
  { runId: refunds.runId, namespace: ["research"] }, // one sub-agent
  Command.resume("approved", { steering: "Cite the policy page", actor: "alice@example.com" }),
);
// The other two children did not run again: their interrupts are still pending, same ids.
console.log("still pending:", after.interrupts.map(taskOf));
