/**
 * The two graphs of the protocol comparison on Rein, for `rein serve --graphs`: the same nodes,
 * state and payloads as `graphs.langgraph.ts` (`refund`: a chat agent that asks to approve a
 * refund; `fanout`: two sub-agents that ask in parallel), compiled against the server's store.
 */
import { append, END, lastValue, START, StateGraph, type Checkpointer } from "@rein/core";
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

/** A chat agent that asks to approve a refund, then replies. */
function refund(store: Checkpointer) {
  return new StateGraph({ messages: append<Message>() })
    .addNode("agent", (s) => ({ messages: agentReply(s.messages) }))
    .addNode("approve", (s, ctx) => {
      recordExecution(String(ctx.threadId), "approve");
      const decision = ctx.interrupt<Decision>(approvalRequest(s.messages));
      return { messages: doneReply(decision) };
    })
    .addEdge(START, "agent")
    .addEdge("agent", "approve")
    .addEdge("approve", END)
    .compile({ checkpointer: store, name: "refund" });
}

/** A supervisor whose two sub-agents ask a person in parallel, then a report. */
function fanout(store: Checkpointer) {
  const subAgent =
    (name: string) =>
    (s: { ticket: string }, ctx: { threadId: unknown; interrupt<T>(payload: unknown): T }) => {
      recordExecution(String(ctx.threadId), name);
      const answer = ctx.interrupt<SubAgentAnswer>(askFor(name, s.ticket));
      return { log: `${name}: ${answer.text}` };
    };
  return new StateGraph({ ticket: lastValue<string>(() => ""), log: append<string>() })
    .addNode("plan", (s) => ({ log: `plan ${s.ticket}` }))
    .addNode("billing", subAgent("billing"))
    .addNode("shipping", subAgent("shipping"))
    .addNode("report", (s) => ({ log: `report (${s.log.length} lines)` }))
    .addEdge(START, "plan")
    .addEdge("plan", "billing")
    .addEdge("plan", "shipping")
    .addEdge("billing", "report")
    .addEdge("shipping", "report")
    .addEdge("report", END)
    .compile({ checkpointer: store, name: "fanout" });
}

/** What `rein serve --graphs` reads. */
export const graphs = { refund, fanout };
