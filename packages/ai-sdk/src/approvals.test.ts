import {
  Command,
  END,
  InvalidAnswerError,
  MemorySaver,
  START,
  StateGraph,
  agent,
  messagesChannel,
  toolNode,
  type MessagesSchema,
  type ToolDecisionRequest,
  type ToolMessage,
} from "@rein/core";
import { tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { fromAiSdk } from "./model.ts";
import { answerOf, scriptedModel, type MockAnswer } from "./scripted.ts";
import { fromAiSdkTools } from "./tools.ts";

const ask = { messages: [{ role: "user" as const, content: "Email the customer" }] };

/** AI SDK tools declared the AI SDK way, counting what `execute` ran with. */
function emailTools() {
  const sent: { to: string; body: string }[] = [];
  const tools = {
    send_email: tool({
      description: "Send an email to the customer.",
      inputSchema: z.object({ to: z.string(), body: z.string().min(1) }),
      needsApproval: true,
      execute: (input) => {
        sent.push(input);
        return Promise.resolve({ sent: true, to: input.to });
      },
    }),
    // Needs a person only for large amounts: a function of the input.
    refund: tool({
      inputSchema: z.object({ amount: z.number() }),
      needsApproval: (input) => input.amount > 100,
      execute: ({ amount }) => `refunded ${amount}`,
    }),
  };
  return { tools: fromAiSdkTools(tools), sent };
}

function calling(name: string, args: Record<string, unknown>, id = "call_1"): MockAnswer {
  return answerOf({ toolCalls: [{ id, name, args }] });
}

describe("AI SDK tools with needsApproval in agent()", () => {
  for (const stream of [false, true])
    it(`needsApproval pauses the call as its own interrupt, and execute runs once with the edit (${stream ? "streaming" : "one response"})`, async () => {
      const { tools, sent } = emailTools();
      const scripted = scriptedModel([
        calling("send_email", { to: "ana@example.com", body: "Sorry!" }),
        answerOf({ text: "Sent." }),
      ]);
      const graph = agent({
        model: fromAiSdk(scripted.model, { stream }),
        tools,
        checkpointer: new MemorySaver(),
      });
      const thread = { threadId: `needs-${stream}` };
      const paused = await graph.invoke(ask, thread);
      expect(paused.status).toBe("interrupted");
      const payload = paused.interrupts[0]?.payload as ToolDecisionRequest;
      expect(payload).toMatchObject({
        action: "send_email",
        args: { to: "ana@example.com", body: "Sorry!" },
        allow: { accept: true, edit: true, respond: true, ignore: true },
      });
      expect(payload.argsSchema).toMatchObject({ properties: { to: { type: "string" } } });
      expect(sent).toEqual([]);
      const id = paused.interrupts[0]?.id as string;
      // An edit the tool's schema refuses is refused before anything is stored.
      await expect(
        graph.invoke(Command.resumeMap({ [id]: { type: "edit", args: { to: 7 } } }), thread),
      ).rejects.toBeInstanceOf(InvalidAnswerError);
      const edit = { to: "ana@example.com", body: "Sorry, refund on its way." };
      const done = await graph.invoke(
        Command.resumeMap({ [id]: { type: "edit", args: edit } }),
        thread,
      );
      expect(done.status).toBe("done");
      expect(sent).toEqual([edit]);
      const result = done.values.messages.find((m): m is ToolMessage => m.role === "tool");
      expect(result).toMatchObject({ status: "done", args: edit, review: { decision: "edit" } });
      expect(result?.content).toBe(JSON.stringify({ sent: true, to: "ana@example.com" }));
    });

  it("needsApproval as a function of the input asks only when it says so", async () => {
    const { tools } = emailTools();
    const scripted = scriptedModel([
      answerOf({
        toolCalls: [
          { id: "small", name: "refund", args: { amount: 20 } },
          { id: "large", name: "refund", args: { amount: 250 } },
        ],
      }),
      answerOf({ text: "Done." }),
    ]);
    const graph = agent({
      model: fromAiSdk(scripted.model),
      tools,
      checkpointer: new MemorySaver(),
    });
    const paused = await graph.invoke(ask, { threadId: "fn" });
    expect(paused.interrupts.map((i) => (i.payload as ToolDecisionRequest).toolCallId)).toEqual([
      "large",
    ]);
    const id = paused.interrupts[0]?.id as string;
    const done = await graph.invoke(Command.resumeMap({ [id]: { type: "ignore" } }), {
      threadId: "fn",
    });
    const results = done.values.messages.filter((m): m is ToolMessage => m.role === "tool");
    expect(results.map((m) => [m.toolCallId, m.status])).toEqual([
      ["small", "done"],
      ["large", "ignored"],
    ]);
  });

  it("work in toolNode() as well", async () => {
    const { tools, sent } = emailTools();
    const graph = new StateGraph<MessagesSchema>({ messages: messagesChannel() })
      .addNode("tools", toolNode(tools))
      .addEdge(START, "tools")
      .addEdge("tools", END)
      .compile({ checkpointer: new MemorySaver() });
    const call = { id: "c9", name: "send_email", args: { to: "bo@example.com", body: "Hi" } };
    const thread = { threadId: "node" };
    const paused = await graph.invoke(
      { messages: [{ role: "assistant", content: "", toolCalls: [call] }] },
      thread,
    );
    expect(paused.status).toBe("interrupted");
    const id = paused.interrupts[0]?.id as string;
    await graph.invoke(Command.resumeMap({ [id]: { type: "accept" } }), thread);
    expect(sent).toEqual([{ to: "bo@example.com", body: "Hi" }]);
  });

  it("a tool without execute is refused where it is declared", () => {
    expect(() => fromAiSdkTools({ lookup: tool({ inputSchema: z.object({}) }) })).toThrow(
      /no execute function/,
    );
  });
});

/** A provider-executed call (a hosted MCP tool) and the provider's request to approve it. */
const hosted = { id: "mcp_1", name: "delete_ticket", args: { ticket: "T-9" }, approvalId: "apr_1" };
const providerAsks = (): MockAnswer => answerOf({ text: "Deleting.", providerCall: hosted });
/** The provider's next answer once approved: the call it ran, its result, and its text. */
const providerRan = (): MockAnswer =>
  answerOf({ text: "Deleted.", providerCall: { ...hosted, output: "deleted T-9" } });

describe("the provider's own approval requests", () => {
  for (const stream of [false, true])
    it(`become Rein interrupts, and an approval goes back as tool-approval-response; nothing runs locally (${stream ? "streaming" : "one response"})`, async () => {
      const { tools, sent } = emailTools();
      const scripted = scriptedModel([providerAsks(), providerRan()]);
      const graph = agent({
        model: fromAiSdk(scripted.model, { stream }),
        tools,
        checkpointer: new MemorySaver(),
      });
      const thread = { threadId: `provider-${stream}` };
      const paused = await graph.invoke(ask, thread);
      expect(paused.status).toBe("interrupted");
      expect(paused.interrupts[0]?.payload).toMatchObject({
        action: "delete_ticket",
        args: { ticket: "T-9" },
        toolCallId: "mcp_1",
        providerApprovalId: "apr_1",
        allow: { accept: true, edit: false, respond: true, ignore: true },
      });
      const id = paused.interrupts[0]?.id as string;
      // The provider runs the call with its own arguments: an edit is refused.
      await expect(
        graph.invoke(
          Command.resumeMap({ [id]: { type: "edit", args: { ticket: "T-1" } } }),
          thread,
        ),
      ).rejects.toBeInstanceOf(InvalidAnswerError);
      const done = await graph.invoke(Command.resumeMap({ [id]: { type: "accept" } }), thread);
      expect(done.status).toBe("done");
      const second = JSON.stringify(scripted.prompts()[1]);
      expect(second).toContain(
        '"type":"tool-approval-response","approvalId":"apr_1","approved":true',
      );
      expect(second).not.toContain("Unknown tool");
      const last = done.values.messages.at(-1);
      expect(last).toMatchObject({
        role: "assistant",
        content: "Deleted.",
        providerResults: [{ toolCallId: "mcp_1", output: "deleted T-9" }],
      });
      expect(sent).toEqual([]);
    });

  it("a rejection goes back as a denied tool-approval-response with the reviewer's reason", async () => {
    const scripted = scriptedModel([providerAsks(), answerOf({ text: "Left it." })]);
    const graph = agent({
      model: fromAiSdk(scripted.model),
      tools: [],
      checkpointer: new MemorySaver(),
    });
    const paused = await graph.invoke(ask, { threadId: "deny" });
    const id = paused.interrupts[0]?.id as string;
    const done = await graph.invoke(
      Command.resumeMap({ [id]: { type: "ignore", reason: "Keep the ticket." } }),
      { threadId: "deny" },
    );
    expect(done.status).toBe("done");
    const tool = done.values.messages.find((m): m is ToolMessage => m.role === "tool");
    expect(tool).toMatchObject({
      status: "ignored",
      approval: { approvalId: "apr_1", approved: false },
    });
    const second = JSON.stringify(scripted.prompts()[1]);
    expect(second).toMatch(
      /"type":"tool-approval-response","approvalId":"apr_1","approved":false,"reason":"[^"]*Keep the ticket\."/,
    );
  });
});

describe("a tool that is not a Rein tool", () => {
  it("is refused when the agent is built, with a message naming fromAiSdkTools", () => {
    const scripted = scriptedModel([]);
    const sendEmail = tool({
      description: "Send an email to the customer.",
      inputSchema: z.object({ to: z.string() }),
      execute: () => Promise.resolve({ sent: true }),
    });
    // An AI SDK tool passed as it is (a cast): it has `execute`, not Rein's `run`.
    const raw = [{ name: "send_email", ...sendEmail }] as unknown as Parameters<
      typeof agent
    >[0]["tools"];
    expect(() =>
      agent({ model: fromAiSdk(scripted.model), tools: raw, checkpointer: new MemorySaver() }),
    ).toThrow(
      expect.objectContaining({ code: "invalid_input", details: { tool: "send_email", index: 0 } }),
    );
    expect(() =>
      agent({ model: fromAiSdk(scripted.model), tools: raw, checkpointer: new MemorySaver() }),
    ).toThrow(/send_email.*not a Rein tool.*fromAiSdkTools/);
  });
});

describe("the tools' context", () => {
  it("reaches execute and a description given as a function (ai 7's tool context)", async () => {
    const seen: unknown[] = [];
    const lookup = tool({
      inputSchema: z.object({ order: z.string() }),
      execute: (input, options) => {
        seen.push((options as { context?: unknown }).context);
        return Promise.resolve({ order: input.order });
      },
    });
    // ai 7 lets a description vary with the context; ai 6's type has only strings.
    const described = {
      ...lookup,
      description: ((o: { context: { shop: string } }) =>
        `Look up an order of ${o.context.shop}.`) as unknown as string,
    };
    const [converted] = fromAiSdkTools(
      // Needed against ai 7 (whose tool types carry the context), not against ai 6.
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
      { lookup: described } as unknown as Parameters<typeof fromAiSdkTools>[0],
      {
        context: { shop: "Mugs & Co" },
      },
    );
    expect(converted?.description).toBe("Look up an order of Mugs & Co.");
    const controller = new AbortController();
    await converted?.run({ order: "1042" } as never, {
      idempotencyKey: "k",
      signal: controller.signal,
      toolCallId: "c1",
    });
    expect(seen).toEqual([{ shop: "Mugs & Co" }]);
  });
});
