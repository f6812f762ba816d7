/**
 * A plain question (not a decision): the one payload of the browser tests that the support-desk
 * demo does not raise, so the console answers it with its JSON editor.
 */
import { END, START, StateGraph, lastValue, type Checkpointer } from "@rein/core";
import { z } from "zod";

/** The `question` graph: asks which warehouse ships the replacement, then stores the answer. */
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
