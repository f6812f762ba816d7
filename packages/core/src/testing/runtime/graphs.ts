/**
 * Graphs shared by several contract files: the two-node pause + resume of the store-call and
 * round-trip counts, a one-question approval, a fan-out of parallel
 * questions, and a supervisor whose sub-agents each ask for approval.
 */
import {
  append,
  END,
  lastValue,
  Send,
  START,
  StateGraph,
  type Checkpointer,
  type Interrupt,
} from "../../index.ts";
import type { Counter } from "./harness.ts";

/**
 * Two nodes, `prepare` adds 1 and `ask` pauses for an answer: the smallest pause and resume, the
 * graph whose store calls (and Postgres round trips) the call-cost tests count.
 */
export function pauseResumeGraph(store: Checkpointer) {
  return new StateGraph({ n: lastValue<number>(() => 0), answer: lastValue<string>() })
    .addNode("prepare", (s) => ({ n: s.n + 1 }))
    .addNode("ask", (_s, ctx) => ({ answer: ctx.interrupt<string>("ok?") }))
    .addEdge(START, "prepare")
    .addEdge("prepare", "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: store });
}

/** prepare → approve (one interrupt asking `{ ok: boolean }`) → END. */
export function approvalGraph(saver: Checkpointer, counter: Counter) {
  return new StateGraph({ amount: lastValue<number>(() => 0), log: append<string>() })
    .addNode("prepare", () => {
      counter.hit("prepare");
      return { log: "prepared" };
    })
    .addNode("approve", (s, ctx) => {
      counter.hit("approve");
      const answer = ctx.interrupt<{ ok: boolean }>({ question: "refund?", amount: s.amount });
      counter.hit("approve:after");
      return { log: answer.ok ? "approved" : "rejected" };
    })
    .addEdge(START, "prepare")
    .addEdge("prepare", "approve")
    .addEdge("approve", END)
    .compile({ checkpointer: saver, name: "approval" });
}

/** One `work` task per item, in parallel, each asking one question about its item. */
export function fanOut(saver: Checkpointer, counter: Counter) {
  return new StateGraph({ items: lastValue<string[]>(() => []), out: append<string>() })
    .addNode("plan", () => ({}))
    .addNode("work", (input: { item: string }, ctx) => {
      counter.hit(input.item);
      const answer = ctx.interrupt<string>({ item: input.item });
      return { out: `${input.item}:${answer}` };
    })
    .addEdge(START, "plan")
    .addConditionalEdges("plan", (s) => s.items.map((item) => new Send("work", { item })))
    .compile({ checkpointer: saver, name: "fanout" });
}

/** A sub-agent that does some work, then asks for approval, then acts. */
export function subAgent(saver: Checkpointer, name: string, counter: Counter) {
  return new StateGraph({ task: lastValue<string>(() => ""), log: append<string>() })
    .addNode("work", (s) => {
      counter.hit(`${name}:work:${s.task}`);
      return { log: `${name} worked on ${s.task}` };
    })
    .addNode("approve", (s, ctx) => {
      counter.hit(`${name}:approve:${s.task}`);
      const answer = ctx.interrupt<string>({ agent: name, task: s.task });
      return {
        log: `${name} ${s.task}: ${answer}${ctx.steering.length ? ` (steered: ${ctx.steering.map((x) => x.text).join("; ")})` : ""}`,
      };
    })
    .addEdge(START, "work")
    .addEdge("work", "approve")
    .compile({ checkpointer: saver, name });
}

/** A sub-agent: state `{ task, log }`, as {@link subAgent} builds it. */
export type SubAgent = ReturnType<typeof subAgent>;

/**
 * A supervisor that sends each task to `agent` in parallel and asks at its own gate while the
 * sub-agents ask too: a pause with both a root question and child questions.
 */
export function gatedSupervisor(saver: Checkpointer, agent: SubAgent, name: string) {
  return new StateGraph({ tasks: lastValue<string[]>(() => []), log: append<string>() })
    .addNode("fan", () => ({}))
    .addNode("agent", agent)
    .addNode("gate", (_s, ctx) => ({ log: `gate: ${ctx.interrupt<string>({ gate: true })}` }))
    .addEdge(START, "fan")
    .addEdge("fan", "gate")
    .addConditionalEdges("fan", (s) => s.tasks.map((task) => new Send("agent", { task })))
    .compile({ checkpointer: saver, name });
}

/**
 * A two-node chain `a` → `b`, each logging its name and counting its runs, compiled with
 * `options` (static interrupt selectors, a name).
 */
export function chainAB(
  saver: Checkpointer,
  counter: Counter,
  options: { name?: string; interruptBefore?: string[]; interruptAfter?: string[] } = {},
) {
  return new StateGraph({ log: append<string>() })
    .addNode("a", () => {
      counter.hit("a");
      return { log: "a" };
    })
    .addNode("b", () => {
      counter.hit("b");
      return { log: "b" };
    })
    .addEdge(START, "a")
    .addEdge("a", "b")
    .compile({ checkpointer: saver, ...options });
}

/** An orchestrator that fans out to `agent` once per task, in parallel. */
export function orchestrator(saver: Checkpointer, counter: Counter, agentName = "research_agent") {
  const agent = subAgent(saver, agentName, counter);
  return new StateGraph({ tasks: lastValue<string[]>(() => []), log: append<string>() })
    .addNode("plan", () => {
      counter.hit("plan");
      return {};
    })
    .addNode("agent", agent)
    .addNode("report", (s) => {
      counter.hit("report");
      return { log: `report of ${s.log.length}` };
    })
    .addEdge(START, "plan")
    .addConditionalEdges("plan", (s) => s.tasks.map((task) => new Send("agent", { task })))
    .addEdge("agent", "report")
    .compile({ checkpointer: saver, name: "supervisor" });
}

/** The task a sub-agent's approval question is about. */
export function taskOf(i: Interrupt): string {
  return (i.payload as { task: string }).task;
}
