import { describe, expect, it } from "vitest";
import { contentText, fieldsOf, isConversation, splitValues, turnOf } from "./conversation.ts";

describe("conversation", () => {
  it("labels each message by who spoke, keeps their order, and lists the AI's tool calls", () => {
    const { conversations, rest } = splitValues({
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Ticket T-1: a mug broke." },
        {
          role: "assistant",
          content: "I propose a refund.",
          toolCalls: [{ id: "c1", name: "issue_refund", args: { orderId: "1042", amount: 120 } }],
        },
        { role: "tool", toolCallId: "c1", name: "issue_refund", status: "done", content: "ok" },
      ],
      ticket: "T-1",
    });
    expect(rest).toEqual({ ticket: "T-1" });
    expect(conversations).toHaveLength(1);
    const turns = conversations[0]!.turns;
    expect(turns.map((t) => [t.speaker, t.label, t.text])).toEqual([
      ["system", "System", "Be brief."],
      ["human", "Human", "Ticket T-1: a mug broke."],
      ["ai", "AI", "I propose a refund."],
      ["tool", "Tool · issue_refund", "ok"],
    ]);
    expect(turns[2]!.calls).toEqual([
      {
        id: "c1",
        action: "Issue refund",
        args: [
          { name: "orderId", text: "1042" },
          { name: "amount", text: "120" },
        ],
      },
    ]);
    expect(turns[3]!.note).toBe("ran");
  });

  it("says how a reviewer changed a tool call, and names a steering note's author", () => {
    const edited = turnOf({
      role: "tool",
      name: "issue_refund",
      status: "done",
      content: '{"receipt":"rf_1"}',
      args: { orderId: "1042", amount: 60 },
      review: {
        decision: "edit",
        actor: "alice@acme",
        interruptId: "i1",
        originalArgs: { orderId: "1042", amount: 120 },
      },
    });
    expect(edited.note).toBe("ran, edited by alice@acme: amount 120 → 60");
    const declined = turnOf({ role: "tool", name: "send_email", status: "ignored", content: "" });
    expect(declined.note).toBe("not run: the reviewer declined it");
    const steering = turnOf({
      role: "user",
      content: "[Steering from alice@acme] Pro rata",
      steering: { id: "s1", actor: "alice@acme" },
    });
    expect([steering.label, steering.text]).toEqual(["Steering · alice@acme", "Pro rata"]);
  });

  it("reads LangChain's message types and content parts; other lists are not conversations", () => {
    expect(turnOf({ type: "human", content: "hi" }).label).toBe("Human");
    expect(turnOf({ type: "ai", content: "hello" }).speaker).toBe("ai");
    expect(
      contentText([
        { type: "text", text: "See" },
        { type: "reasoning", text: "hidden" },
        { type: "image", url: "https://x/y.png" },
        { type: "file", mediaType: "application/pdf", filename: "a.pdf" },
      ]),
    ).toBe("See\n[image]\n[file a.pdf]");
    expect(isConversation([])).toBe(false);
    expect(isConversation([{ role: "user", content: "x" }, { id: 1 }])).toBe(false);
    expect(isConversation(["research", "refund"])).toBe(false);
  });

  it("puts a run's other values in words: lists joined, unset said, objects one level down", () => {
    expect(
      fieldsOf({
        dispatch: ["research", "refund"],
        resolution: null,
        total: 1200,
        ticket: { id: "T-1", orderId: "1042", deep: { a: 1 } },
        queue: [],
      }),
    ).toEqual([
      { label: "Dispatch", text: "research, refund" },
      { label: "Resolution", text: "not set" },
      { label: "Total", text: "1,200" },
      {
        label: "Ticket",
        fields: [
          { label: "Id", text: "T-1" },
          { label: "Order id", text: "1042" },
          { label: "Deep", text: '{"a":1}' },
        ],
      },
      { label: "Queue", text: "none" },
    ]);
  });
});
