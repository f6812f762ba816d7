import { END, RunConfig, START, StateGraph, lastValue } from "@rein/core";
import { SqliteSaver } from "@rein/sqlite";

// One module builds the graph; every process (web server, worker) imports the same definition.
const checkpointer = SqliteSaver.open(process.env["REIN_DB"] ?? "rein.db");
export const graph = new StateGraph({ reply: lastValue<string>() })
  .addNode("answer", (_s, ctx) => {
    // Unanswered for a day, the approval resolves itself with `false`.
    const ok = ctx.interrupt<boolean>({ question: "Send?" }, { timeout: "1d", onTimeout: false });
    return { reply: ok ? "sent" : "held back" };
  })
  .addEdge(START, "answer")
  .addEdge("answer", END)
  .compile({ checkpointer });

// Deadlines hold only while some process checks them: start the timer in every worker.
const deadlines = graph.startDeadlineTimer({ intervalMs: 5_000, onError: console.error });
await deadlines.ready;

const paused = await graph.invoke({}, RunConfig.thread("ticket-9"));
console.log(paused.status);

// On shutdown: stop the timer, then close the store.
async function shutdown(): Promise<void> {
  deadlines.stop();
  await checkpointer.close();
}
process.once("SIGTERM", () => void shutdown());
// (This example exits here; a server would keep serving until SIGTERM.)
await shutdown();
console.log("closed");
