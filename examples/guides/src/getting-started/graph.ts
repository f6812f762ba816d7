import { END, START, StateGraph, append, lastValue } from "@rein/core";
import { SqliteSaver } from "@rein/sqlite";

// State is a set of typed channels: a last-value string and an append-only log.
export const graph = new StateGraph({ topic: lastValue<string>(), log: append<string>() })
  .addNode("draft", (s) => ({ log: `draft about ${s.topic}` }))
  .addNode("publish", (_s, ctx) => {
    // Pauses the run until a person answers; the answer is what interrupt() returns.
    const ok = ctx.interrupt<boolean>({ question: "Publish the draft?" });
    return { log: ok ? "published" : "discarded" };
  })
  .addEdge(START, "draft")
  .addEdge("draft", "publish")
  .addEdge("publish", END)
  .compile({ checkpointer: SqliteSaver.open("app.db") });
