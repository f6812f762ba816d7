/**
 * The graph of the escalation-ladder process tests (`rein serve --graphs` this module): a refund
 * that support may approve, reminded after `remindMs`, escalated to managers after `escalateMs`
 * and defaulted after `timeoutMs` (all from the run's input, so a test keeps them short).
 */
import { END, START, StateGraph, lastValue, type Checkpointer } from "@rein/core";
import type { GraphFactory } from "../registry.ts";

/** The refund question with its ladder. */
export function escalating(store: Checkpointer) {
  return new StateGraph({
    remindMs: lastValue<number>(() => 0),
    escalateMs: lastValue<number>(() => 0),
    timeoutMs: lastValue<number>(() => 0),
    decision: lastValue<string>(() => ""),
  })
    .addNode("ask", (s, ctx) => ({
      decision: ctx.interrupt<string>(
        { action: "refund", amount: 120 },
        {
          approvers: { groups: ["support"] },
          remind: s.remindMs,
          escalate: { after: s.escalateMs, approvers: { groups: ["managers"] } },
          timeout: s.timeoutMs,
          onTimeout: "defaulted",
        },
      ),
    }))
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: store, name: "escalating" });
}

/** The graphs by name, as a `--graphs` module exports them. */
export const graphs: Record<string, GraphFactory> = { escalating };
