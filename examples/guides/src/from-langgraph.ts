// The LangGraph.js program "ask a human, then act", written with Rein.
import { Command, END, MemorySaver, RunConfig, START, StateGraph, lastValue } from "@rein/core";

const graph = new StateGraph({
  // LangGraph.js: Annotation.Root({ question: Annotation<string>, answer: Annotation<string> })
  question: lastValue<string>(),
  answer: lastValue<string>(),
})
  .addNode("ask", (s, ctx) => {
    // LangGraph.js: interrupt(value) from "@langchain/langgraph" (the free function works too).
    const answer = ctx.interrupt<string>({ question: s.question });
    return { answer };
  })
  .addEdge(START, "ask")
  .addEdge("ask", END)
  // LangGraph.js: new MemorySaver() from "@langchain/langgraph"; the same name here.
  .compile({ checkpointer: new MemorySaver() });

// LangGraph.js: { configurable: { thread_id: "t-1" } }
const thread = RunConfig.thread("t-1");
const paused = await graph.invoke({ question: "Which plan?" }, thread);
// LangGraph.js: result.__interrupt__; here a status and a list with one id per interrupt() call.
console.log(paused.status, paused.interrupts.length);

// LangGraph.js: graph.invoke(new Command({ resume: "pro" }), config)
const done = await graph.resume(thread, Command.resume("pro"));
console.log(done.values.answer);
