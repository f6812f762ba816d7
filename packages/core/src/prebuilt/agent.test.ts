import { describe, expect, it } from "vitest";
import { MemorySaver } from "../checkpoint/memory.ts";
import { InvalidAnswerError } from "../errors.ts";
import { Command } from "../graph/command.ts";
import { agent } from "./agent.ts";
import { z } from "zod";
import type { Message, Model, ModelCallOptions } from "./messages.ts";
import { tool, type ToolDecisionRequest } from "./tool-node.ts";

function scriptedModel(): Model {
  return (messages) => {
    if (messages.some((m) => m.role === "tool"))
      return {
        role: "assistant",
        content: `done after ${messages.filter((m) => m.role === "tool").length} tool results`,
      };
    return {
      role: "assistant",
      content: "calling tools",
      toolCalls: [
        { id: "call-search", name: "search", args: { q: "order 1042" } },
        { id: "call-refund", name: "refund", args: { amount: 50 } },
        { id: "call-email", name: "email", args: { to: "a@example.com" } },
        { id: "call-delete", name: "delete_account", args: { user: 7 } },
      ],
    };
  };
}

function setup() {
  const executed: { name: string; args: unknown; key: string }[] = [];
  const record = (name: string) => (args: unknown, ctx: { idempotencyKey: string }) => {
    executed.push({ name, args, key: ctx.idempotencyKey });
    return `${name} ok`;
  };
  const graph = agent({
    model: scriptedModel(),
    tools: [
      tool({ name: "search", run: record("search") }),
      tool({ name: "refund", description: "pays money back", run: record("refund") }),
      tool({ name: "email", run: record("email") }),
      tool({ name: "delete_account", run: record("delete_account") }),
    ],
    approve: ["refund", "email", "delete_account"],
    checkpointer: new MemorySaver(),
  });
  return { graph, executed };
}

describe("toolNode with approvals", () => {
  it("raises one interrupt per call needing approval, with the decision payload", async () => {
    const { graph, executed } = setup();
    const r = await graph.invoke(
      { messages: [{ role: "user", content: "refund and tell them" }] },
      { threadId: "a1" },
    );
    expect(r.status).toBe("interrupted");
    const requests = r.interrupts.map((i) => i.payload as ToolDecisionRequest);
    expect(requests.map((p) => p.action).sort()).toEqual(["delete_account", "email", "refund"]);
    expect(requests.find((p) => p.action === "refund")).toMatchObject({
      args: { amount: 50 },
      allow: { accept: true, edit: true, respond: true, ignore: true },
      toolCallId: "call-refund",
    });
    expect(new Set(r.interrupts.map((i) => i.id)).size).toBe(3);
    // The call without approval ran already; none of the others did.
    expect(executed.map((e) => e.name)).toEqual(["search"]);
  });

  it("runs only accepted and edited calls, each exactly once, and answers the rest in the tool's place", async () => {
    const { graph, executed } = setup();
    const r = await graph.invoke(
      { messages: [{ role: "user", content: "go" }] },
      { threadId: "a2" },
    );
    const idOf = (action: string) =>
      r.interrupts.find((i) => (i.payload as ToolDecisionRequest).action === action)?.id as string;
    await graph.invoke(Command.resumeMap({ [idOf("refund")]: { type: "accept" } }), {
      threadId: "a2",
    });
    await graph.invoke(
      Command.resumeMap({ [idOf("email")]: { type: "edit", args: { to: "b@example.com" } } }),
      { threadId: "a2" },
    );
    const done = await graph.invoke(
      Command.resumeMap({ [idOf("delete_account")]: { type: "ignore" } }),
      { threadId: "a2" },
    );
    expect(done.status).toBe("done");
    expect(executed.map((e) => [e.name, e.args])).toEqual([
      ["search", { q: "order 1042" }],
      ["refund", { amount: 50 }],
      ["email", { to: "b@example.com" }],
    ]);
    expect(new Set(executed.map((e) => e.key)).size).toBe(3);
    const toolMessages = done.values.messages.filter(
      (m): m is Extract<Message, { role: "tool" }> => m.role === "tool",
    );
    expect(toolMessages.map((m) => [m.name, m.status])).toEqual([
      ["search", "done"],
      ["refund", "done"],
      ["email", "done"],
      ["delete_account", "ignored"],
    ]);
    expect(done.values.messages.at(-1)).toEqual({
      role: "assistant",
      content: "done after 4 tool results",
    });
  });

  it("refuses a malformed decision before anything is stored", async () => {
    const { graph, executed } = setup();
    const r = await graph.invoke(
      { messages: [{ role: "user", content: "go" }] },
      { threadId: "a3" },
    );
    const id = r.interrupts[0]?.id as string;
    await expect(
      graph.invoke(Command.resumeMap({ [id]: { type: "approve" } }), { threadId: "a3" }),
    ).rejects.toBeInstanceOf(InvalidAnswerError);
    expect((await graph.getState({ threadId: "a3" })).interrupts).toHaveLength(3);
    expect(executed.map((e) => e.name)).toEqual(["search"]);
  });

  it("a respond answer becomes the tool message, with who answered", async () => {
    const { graph, executed } = setup();
    const r = await graph.invoke(
      { messages: [{ role: "user", content: "go" }] },
      { threadId: "a4" },
    );
    const done = await graph.invoke(
      Command.resumeMap(
        Object.fromEntries(
          r.interrupts.map((i) => [
            i.id,
            (i.payload as ToolDecisionRequest).action === "refund"
              ? { type: "respond", message: "Refunds over $20 go through finance." }
              : { type: "ignore" },
          ]),
        ),
        { actor: "bob@example.com" },
      ),
      { threadId: "a4" },
    );
    const refund = done.values.messages.find(
      (m): m is Extract<Message, { role: "tool" }> => m.role === "tool" && m.name === "refund",
    );
    expect(refund).toMatchObject({
      status: "responded",
      content: "Refunds over $20 go through finance.",
      review: { decision: "respond", actor: "bob@example.com" },
    });
    expect(executed.map((e) => e.name)).toEqual(["search"]);
  });

  it("the model receives the tools' JSON Schemas and the run's abort signal", async () => {
    const seen: ModelCallOptions[] = [];
    const graph = agent({
      model: (_messages, options) => {
        seen.push(options);
        return { role: "assistant", content: "hi" };
      },
      tools: [
        tool({
          name: "lookup",
          description: "Find an order.",
          schema: z.object({ orderId: z.string() }),
          run: () => null,
        }),
      ],
    });
    const controller = new AbortController();
    await graph.invoke(
      { messages: [{ role: "user", content: "hi" }] },
      { signal: controller.signal },
    );
    expect(seen[0]?.tools).toEqual([
      {
        name: "lookup",
        description: "Find an order.",
        parameters: {
          type: "object",
          properties: { orderId: { type: "string" } },
          required: ["orderId"],
        },
      },
    ]);
    expect(seen[0]?.signal).toBeInstanceOf(AbortSignal);
    expect(seen[0]?.signal.aborted).toBe(false);
  });
});
