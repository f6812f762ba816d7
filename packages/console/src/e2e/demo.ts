/**
 * The graph the browser tests and screenshots run: an orchestrator whose refund and email
 * sub-agents pause at once with decision payloads, like the support-desk demo. When the real
 * demo lands, point `DEMO` at it: the tests read nothing else from this file.
 */
import { END, START, StateGraph, append, lastValue, reducer, type Checkpointer } from "@rein/core";
import { z } from "zod";

/** The answer a decision takes (SPEC §3 convention; respond carries a `message`). */
const decisionAnswer = z.discriminatedUnion("type", [
  z.object({ type: z.literal("accept") }),
  z.object({ type: z.literal("edit"), args: z.record(z.string(), z.unknown()) }),
  z.object({ type: z.literal("respond"), message: z.string().min(1) }),
  z.object({ type: z.literal("ignore") }),
]);

/** A sub-agent that proposes one action, asks a person, then acts at most once. */
function approver(
  store: Checkpointer,
  name: string,
  action: string,
  propose: (ticket: string) => Record<string, unknown>,
  description: string,
) {
  return new StateGraph({ ticket: lastValue<string>(() => ""), log: append<string>() })
    .addNode("approve", async (s, ctx) => {
      const args = propose(s.ticket);
      const decision = ctx.interrupt(
        {
          action,
          args,
          description: `${description} (ticket ${s.ticket})`,
          allow: { accept: true, edit: true, respond: true, ignore: true },
        },
        { answer: decisionAnswer },
      );
      const steering = ctx.steering.map((x) => x.text).join("; ");
      if (decision.type === "ignore") return { log: `${name}: ignored` };
      if (decision.type === "respond") return { log: `${name}: asked back "${decision.message}"` };
      const used = decision.type === "edit" ? decision.args : args;
      const done = await ctx.once(action, () => `${action} ${JSON.stringify(used)}`);
      return { log: `${name}: ${done}${steering ? ` [steered: ${steering}]` : ""}` };
    })
    .addEdge(START, "approve")
    .addEdge("approve", END)
    .compile({ checkpointer: store, name });
}

/** The orchestrator: triage, then refund and email sub-agents in parallel, then a summary. */
export function supportDesk(store: Checkpointer) {
  return new StateGraph({
    ticket: reducer<string>(
      (_a, b) => b,
      () => "T-1042",
    ),
    log: append<string>(),
  })
    .addNode("triage", (s) => ({ log: `triage ${s.ticket}` }))
    .addNode(
      "refund_agent",
      approver(
        store,
        "refund_agent",
        "issue_refund",
        (ticket) => ({ ticket, amount: 120, currency: "EUR" }),
        "Refund the damaged order",
      ),
    )
    .addNode(
      "email_agent",
      approver(
        store,
        "email_agent",
        "send_email",
        (ticket) => ({ to: "customer@example.com", subject: `About your ticket ${ticket}` }),
        "Tell the customer what happens next",
      ),
    )
    .addNode("summary", (s) => ({ log: `summary (${s.log.length} lines)` }))
    .addEdge(START, "triage")
    .addEdge("triage", "refund_agent")
    .addEdge("triage", "email_agent")
    .addEdge("refund_agent", "summary")
    .addEdge("email_agent", "summary")
    .addEdge("summary", END)
    .compile({ checkpointer: store, name: "support_desk" });
}

/** A plain question (not a decision): the console answers it with its JSON editor. */
export function question(store: Checkpointer) {
  return new StateGraph({ answer: lastValue<string>(() => "") })
    .addNode("ask", (_s, ctx) => {
      const reply = ctx.interrupt(
        { question: "Which warehouse ships the replacement?" },
        { answer: z.object({ warehouse: z.string().min(2).max(40) }).strict() },
      );
      return { answer: reply.warehouse };
    })
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: store, name: "question" });
}

/** What the tests run: the graph registered under `name`, started with `input`. */
export const DEMO = {
  name: "support_desk",
  graphs: { support_desk: supportDesk },
  input: {},
  /** Node names of the two parallel sub-agents that pause. */
  refundAgent: "refund_agent",
  emailAgent: "email_agent",
} as const;
