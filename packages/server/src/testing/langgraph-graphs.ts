/**
 * Graphs of the LangGraph protocol tests: the prebuilt agent asking to approve a refund (a
 * scripted model, no network), and two parallel nodes that each ask a question and count how
 * often their code runs.
 */
import {
  END,
  START,
  StateGraph,
  agent,
  append,
  lastValue,
  tool,
  type Checkpointer,
} from "@rein/core";
import { z } from "zod";
import type { GraphFactory } from "../registry.ts";

/** Executions of the `fanout` graph's nodes in this process, by thread and node. */
export const fanoutExecutions = new Map<string, number>();

/** How often a `fanout` node ran on a thread. */
export function executions(threadId: string, node: string): number {
  return fanoutExecutions.get(`${threadId}/${node}`) ?? 0;
}

/** The prebuilt agent with a refund tool that needs approval; the model asks for one refund. */
export function refundAgent(store: Checkpointer) {
  const refund = tool({
    name: "refund",
    description: "Refund an order.",
    schema: z.object({ order: z.string(), amount: z.number() }),
    run: (args) => `refunded ${args.amount} on ${args.order}`,
  });
  return agent({
    model: (messages) => {
      const last = messages.at(-1);
      if (last?.role === "tool")
        return {
          role: "assistant",
          content: `Done: ${typeof last.content === "string" ? last.content : "(parts)"}`,
        };
      return {
        role: "assistant",
        content: "I will refund the order.",
        toolCalls: [{ id: "call_1", name: "refund", args: { order: "A-1", amount: 50 } }],
      };
    },
    tools: [refund],
    approve: ["refund"],
    checkpointer: store,
    name: "refund-agent",
  });
}

/** Two parallel nodes, each asking its own question; every execution is counted. */
export function fanout(store: Checkpointer) {
  const asking =
    (name: string) =>
    (_state: unknown, ctx: { threadId: unknown; interrupt: <T>(p: unknown) => T }) => {
      const key = `${String(ctx.threadId)}/${name}`;
      fanoutExecutions.set(key, (fanoutExecutions.get(key) ?? 0) + 1);
      const answer = ctx.interrupt<string>({ question: `${name}?` });
      return { answers: `${name}: ${answer}` };
    };
  return new StateGraph({ topic: lastValue<string>(() => ""), answers: append<string>() })
    .addNode("left", asking("left"))
    .addNode("right", asking("right"))
    .addEdge(START, "left")
    .addEdge(START, "right")
    .addEdge("left", END)
    .addEdge("right", END)
    .compile({ checkpointer: store, name: "fanout" });
}

/** The protocol tests' graphs by name. */
export const langGraphGraphs: Record<string, GraphFactory> = {
  "refund-agent": refundAgent,
  fanout,
};
