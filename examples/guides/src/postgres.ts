import { END, RunConfig, START, StateGraph, lastValue } from "@rein/core";
import { PostgresSaver } from "@rein/postgres";

// connect() creates the schema if needed and applies pending migrations, in a transaction that
// holds an advisory lock, so several processes may start at once.
const checkpointer = await PostgresSaver.connect({
  connectionString: process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/app",
  schema: process.env["REIN_SCHEMA"] ?? "rein",
});

const graph = new StateGraph({ count: lastValue<number>() })
  .addNode("increment", (s) => ({ count: (s.count ?? 0) + 1 }))
  .addEdge(START, "increment")
  .addEdge("increment", END)
  .compile({ checkpointer });

const result = await graph.invoke({ count: 41 }, RunConfig.thread("counter"));
console.log(result.status, result.values.count);

// Closes the connection pool so the process can exit.
await checkpointer.close();
