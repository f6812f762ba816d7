import {
  MemorySaver,
  START,
  StateGraph,
  agent,
  lastAssistantText,
  lastValue,
  subAgent,
} from "@rein/core";

const checkpointer = new MemorySaver();

// The child: an agent with its own conversation (its "model" here just answers in one turn).
const refundAgent = agent({
  model: (messages) => ({
    role: "assistant",
    content: `Refund agent read ${messages.length} message(s): refunding the broken mug.`,
  }),
  tools: [],
  checkpointer,
  name: "refund_agent",
});

const desk = new StateGraph({
  ticket: lastValue<{ text: string }>(),
  refundReport: lastValue<string>(),
})
  .addNode(
    "refund",
    subAgent(refundAgent, {
      input: (s) => ({ messages: [{ role: "user" as const, content: s.ticket.text }] }),
      output: (v) => ({ refundReport: lastAssistantText(v.messages) }),
    }),
  )
  .addEdge(START, "refund")
  .compile({ checkpointer, name: "desk" });

const result = await desk.invoke({ ticket: { text: "My mug arrived broken" } }, { threadId: "t1" });
// The parent gets the summary only, never the child's messages.
console.log(Object.keys(result.values), "→", result.values.refundReport);
