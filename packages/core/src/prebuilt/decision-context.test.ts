import { describe, expect, it } from "vitest";
import { MemorySaver } from "../checkpoint/memory.ts";
import { agent } from "./agent.ts";
import type { Message, Model } from "./messages.ts";
import { tool, type ToolDecisionRequest } from "./tool-node.ts";

const lookup: Message = {
  role: "tool",
  toolCallId: "call-lookup",
  name: "lookup_order",
  status: "done",
  content: "Order 1042: two mugs, $120; one arrived broken.",
};

/** Looks the order up, then asks to refund, saying why. */
const model: Model = (messages) => {
  if (!messages.some((m) => m.role === "tool"))
    return {
      role: "assistant",
      content: "",
      toolCalls: [{ id: "call-lookup", name: "lookup_order", args: { orderId: "1042" } }],
    };
  return {
    role: "assistant",
    content: "One of two mugs broke; I propose refunding the order in full.",
    toolCalls: [{ id: "call-refund", name: "refund", args: { amount: 120 } }],
  };
};

function refundAgent() {
  return agent({
    model,
    tools: [
      tool({ name: "lookup_order", run: () => lookup.content }),
      tool({
        name: "refund",
        description: "Pays money back.",
        irreversible: true,
        run: () => "ok",
      }),
      tool({ name: "note", run: () => "noted" }),
    ],
    approve: ["refund", "note"],
    checkpointer: new MemorySaver(),
  });
}

describe("the decision payload's context", () => {
  it("carries the model's stated reason and the conversation that led to the call", async () => {
    const r = await refundAgent().invoke(
      { messages: [{ role: "user", content: "Ticket T-1042: my mug arrived broken." }] },
      { threadId: "c1" },
    );
    const request = r.interrupts[0]?.payload as ToolDecisionRequest;
    expect(request.description).toBe("Pays money back.");
    expect(request.context).toEqual({
      summary: "One of two mugs broke; I propose refunding the order in full.",
      messages: [
        { role: "user", text: "Ticket T-1042: my mug arrived broken." },
        {
          role: "tool",
          name: "lookup_order",
          text: "Order 1042: two mugs, $120; one arrived broken.",
        },
      ],
    });
  });

  it("marks a call irreversible only when its tool declares it", async () => {
    const irreversible = await refundAgent().invoke(
      { messages: [{ role: "user", content: "refund" }] },
      { threadId: "c2" },
    );
    expect((irreversible.interrupts[0]?.payload as ToolDecisionRequest).irreversible).toBe(true);
    const reversible = agent({
      model: () => ({
        role: "assistant",
        content: "",
        toolCalls: [{ id: "call-note", name: "note", args: {} }],
      }),
      tools: [tool({ name: "note", run: () => "noted" })],
      approve: ["note"],
      checkpointer: new MemorySaver(),
    });
    const asked = await reversible.invoke(
      { messages: [{ role: "user", content: "note it" }] },
      {
        threadId: "c3",
      },
    );
    const request = asked.interrupts[0]?.payload as ToolDecisionRequest;
    expect(request.irreversible).toBeUndefined();
    // No text beside the call: the summary says what is asked.
    expect(request.context.summary).toBe("The agent asks to run note.");
  });
});
