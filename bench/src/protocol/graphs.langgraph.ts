/**
 * The two graphs of the protocol comparison, on LangGraph.js, as `langgraph dev` and the embed
 * server load them: `refund`, a chat agent that proposes a refund and asks a person to approve it
 * (one interrupt), and `fanout`, a supervisor whose two sub-agents ask in parallel. The Rein
 * versions in `graphs.rein.ts` have the same nodes, state and payloads. No model is called: the
 * agent's turn is scripted, so the figures measure the servers, not a model.
 */
import { Annotation, END, interrupt, START, StateGraph } from "@langchain/langgraph";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { recordExecution } from "./executions.ts";
import {
  agentReply,
  approvalRequest,
  askFor,
  doneReply,
  type Decision,
  type Message,
  type SubAgentAnswer,
} from "./shapes.ts";

const threadOf = (config: LangGraphRunnableConfig): string =>
  String(config.configurable?.thread_id ?? "");

const RefundState = Annotation.Root({
  messages: Annotation<Message[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/** A chat agent that asks to approve a refund, then replies. */
export const refund = new StateGraph(RefundState)
  .addNode("agent", (s) => ({ messages: [agentReply(s.messages)] }))
  .addNode("approve", (s, config: LangGraphRunnableConfig) => {
    recordExecution(threadOf(config), "approve");
    const decision = interrupt<unknown, Decision>(approvalRequest(s.messages));
    return { messages: [doneReply(decision)] };
  })
  .addEdge(START, "agent")
  .addEdge("agent", "approve")
  .addEdge("approve", END)
  .compile();

const FanState = Annotation.Root({
  ticket: Annotation<string>(),
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

function subAgent(name: string) {
  return (s: typeof FanState.State, config: LangGraphRunnableConfig) => {
    recordExecution(threadOf(config), name);
    const answer = interrupt<unknown, SubAgentAnswer>(askFor(name, s.ticket));
    return { log: [`${name}: ${answer.text}`] };
  };
}

/** A supervisor whose two sub-agents ask a person in parallel, then a report. */
export const fanout = new StateGraph(FanState)
  .addNode("plan", (s) => ({ log: [`plan ${s.ticket}`] }))
  .addNode("billing", subAgent("billing"))
  .addNode("shipping", subAgent("shipping"))
  .addNode("report", (s) => ({ log: [`report (${s.log.length} lines)`] }))
  .addEdge(START, "plan")
  .addEdge("plan", "billing")
  .addEdge("plan", "shipping")
  .addEdge("billing", "report")
  .addEdge("shipping", "report")
  .addEdge("report", END)
  .compile();
