import { END, RunConfig, START, StateGraph, append } from "@rein/core";

const graph = new StateGraph({ words: append<string>() })
  .addNode("write", (_s, ctx) => {
    // `custom` events carry anything a node wants to show while it works, such as tokens.
    for (const token of ["durable", "graphs"]) ctx.emit({ token });
    return { words: ["durable", "graphs"] };
  })
  .addNode("sign", () => ({ words: "— rein" }))
  .addEdge(START, "write")
  .addEdge("write", "sign")
  .addEdge("sign", END)
  .compile();

const events = graph.stream({}, { ...RunConfig.thread("t-1"), streamMode: ["updates", "custom"] });
for await (const event of events) {
  if (event.type === "custom") console.log("custom:", JSON.stringify(event.data));
  if (event.type === "updates") console.log(`update from ${event.node}:`, event.update);
  if (event.type === "end") console.log("end:", event.result.status);
}
