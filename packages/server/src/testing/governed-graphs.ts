/**
 * The graphs of the CLI's governance tests (`rein serve --graphs` this module): the supervisor
 * `desk` of the other tests, whose sub-agents ask without a policy, and `governed`, a refund
 * that needs two approvers from finance (not the requester) when it is over $1,000.
 */
import { END, START, StateGraph, lastValue, type Checkpointer } from "@rein/core";
import type { GraphFactory } from "../registry.ts";
import { decisionAnswer, desk } from "./graphs.ts";

/** A refund of the input `amount`; over 1,000 it needs two approvers from finance. */
export function governed(store: Checkpointer) {
  return new StateGraph({
    amount: lastValue<number>(() => 0),
    outcome: lastValue<string>(() => ""),
  })
    .addNode("approve", (s, ctx) => {
      const decision = ctx.interrupt(
        {
          action: "refund",
          args: { amount: s.amount },
          allow: { accept: true, edit: true, respond: true, ignore: true },
        },
        {
          answer: decisionAnswer,
          approvers: {
            when: { path: "args.amount", gt: 1000 },
            then: { groups: ["finance"], count: 2 },
          },
        },
      );
      return { outcome: decision.type === "accept" ? `refunded ${s.amount}` : decision.type };
    })
    .addEdge(START, "approve")
    .addEdge("approve", END)
    .compile({ checkpointer: store, name: "governed" });
}

/** The graphs by name, as a `--graphs` module exports them. */
export const graphs: Record<string, GraphFactory> = { desk, governed };
