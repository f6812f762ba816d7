/**
 * The v2 `messages` and `tools` channels on `rein serve`, read through the real
 * `@langchain/langgraph-sdk` 1.15 `client.threads.stream()`: a prebuilt agent whose model streams
 * its answer token by token and asks for two tools (one runs at once, one waits for approval).
 * The client sees the streamed text as it comes, each message once (a streamed reply keeps its
 * id in the state it then reads), the tool calls start and finish with their outputs, and the
 * approved run streams too.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  TOKENS,
  readSse,
  sqliteBackend,
  startTestServer,
  type TestServer,
  type TestStore,
} from "../../testing/harness.ts";
import { streamingAgent } from "../../testing/streaming-agent.ts";

type Json = Record<string, unknown>;
type Frame = {
  method: string;
  seq: number;
  params: { namespace: string[]; node?: string; data: Json };
};

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(!sqliteBackend.available)("LangGraph v2 messages and tools channels", () => {
  let store: TestStore;
  let server: TestServer;
  let base: string;
  let sdk: Client;

  beforeEach(async () => {
    store = await sqliteBackend.create();
    server = await startTestServer(store.store, { graphs: { streamer: streamingAgent } });
    base = `${server.url}/langgraph`;
    sdk = new Client({ apiUrl: base, apiKey: TOKENS["alice"]!.token });
  });
  afterEach(async () => {
    await server.close();
    await store.destroy();
  });

  /** A raw stream of the thread's events, read until the root's terminal lifecycle event. */
  async function raw(threadId: string, since = 0): Promise<Frame[]> {
    const response = await fetch(`${base}/threads/${threadId}/stream/events`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": TOKENS["alice"]!.token },
      body: JSON.stringify({ channels: ["messages", "tools", "values", "lifecycle"], since }),
    });
    return readSse(response, (e) => {
      const f = e.data as Frame;
      return (
        f.method === "lifecycle" &&
        f.params.namespace.length === 0 &&
        ["interrupted", "completed", "failed"].includes(String(f.params.data["event"]))
      );
    }).then((events) => events.map((e) => e.data as Frame));
  }

  it("streams the model's text as it comes and the tool calls' start and end, each message once", async () => {
    const thread = sdk.threads.stream("t-stream", { assistantId: "streamer" });
    const texts: Promise<string>[] = [];
    // The client yields a call's handle at its start and again at its end: kept by call id.
    const calls = new Map<
      string,
      { name: string; callId: string; input: unknown; output: Promise<unknown> }
    >();
    void (async () => {
      for await (const message of thread.messages) texts.push(Promise.resolve(message.text));
    })();
    void (async () => {
      for await (const call of thread.toolCalls) {
        if (!calls.has(call.callId)) calls.set(call.callId, call);
      }
    })();
    await thread.run.start({
      input: { messages: [{ type: "human", content: "refund A-1", id: "h1" }] },
    });
    // Opened after the start (the thread exists from then on): it replays the run's events.
    const first = await raw("t-stream");

    // The model's reply came as deltas, one message, with its tool calls and usage.
    const streamedMessages = first.filter((f) => f.method === "messages");
    const starts = streamedMessages.filter((f) => f.params.data["event"] === "message-start");
    expect(starts).toHaveLength(1);
    const replyId = starts[0]!.params.data["id"] as string;
    expect(starts[0]!.params.node).toBe("model");
    const deltas = streamedMessages
      .filter((f) => f.params.data["event"] === "content-block-delta")
      .map((f) => (f.params.data["delta"] as Json)["text"]);
    expect(deltas).toEqual(["Let me ", "check."]);
    const finished = streamedMessages.filter(
      (f) => f.params.data["event"] === "content-block-finish",
    );
    expect(finished.map((f) => f.params.data["content"])).toEqual([
      { type: "text", text: "Let me check." },
      { type: "tool_call", id: "call_look", name: "lookup", args: { order: "A-1" } },
      { type: "tool_call", id: "call_pay", name: "refund", args: { amount: 50 } },
    ]);
    expect(streamedMessages.at(-1)?.params.data).toEqual({
      event: "message-finish",
      usage: { input_tokens: 12, output_tokens: 7, total_tokens: 19 },
    });
    // The state the client reads shows the streamed reply under the id it was streamed with, as
    // a LangChain message, so the client's projection shows it once.
    const lastValues = first.filter((f) => f.method === "values").at(-1)!.params.data;
    const stateMessages = lastValues["messages"] as Json[];
    expect(stateMessages.map((m) => [m["type"], m["id"]])).toEqual([
      ["human", "h1"],
      ["ai", replyId],
    ]);
    // Both tools started when the tool node did; the node paused on the refund's approval, so
    // this run ends them as interrupted (the next run starts them again).
    const tools = first.filter((f) => f.method === "tools").map((f) => f.params.data);
    expect(tools.map((d) => [d["event"], d["tool_call_id"], d["code"] ?? null])).toEqual([
      ["tool-started", "call_look", null],
      ["tool-started", "call_pay", null],
      ["tool-error", "call_look", "interrupted"],
      ["tool-error", "call_pay", "interrupted"],
    ]);
    expect(tools[1]).toMatchObject({ tool_name: "refund", input: { amount: 50 } });
    await until(() => thread.interrupts.length === 1, "the refund's approval");
    // The client's projections of this run: the streamed text, the two calls with their input.
    await until(() => texts.length === 1 && calls.size === 2, "the run's message and calls");
    expect(await texts[0]).toBe("Let me check.");
    expect([...calls.values()].map((c) => [c.name, c.callId, c.input])).toEqual([
      ["lookup", "call_look", { order: "A-1" }],
      ["refund", "call_pay", { amount: 50 }],
    ]);
    await expect(calls.get("call_pay")!.output).rejects.toThrow(/waits for an answer/);

    // Approving the refund streams the continued run: both tools end, the answer streams.
    const secondRun = raw("t-stream", first.at(-1)!.seq);
    const [approval] = thread.interrupts as { interruptId: string; namespace: string[] }[];
    await thread.input.respond({
      namespace: approval!.namespace,
      interrupt_id: approval!.interruptId,
      response: { type: "accept" },
    });
    const second = await secondRun;
    const secondTools = second.filter((f) => f.method === "tools").map((f) => f.params.data);
    expect(secondTools).toEqual([
      {
        event: "tool-started",
        tool_call_id: "call_look",
        tool_name: "lookup",
        input: { order: "A-1" },
      },
      { event: "tool-finished", tool_call_id: "call_look", output: '{"order":"A-1","paid":50}' },
      {
        event: "tool-started",
        tool_call_id: "call_pay",
        tool_name: "refund",
        input: { amount: 50 },
      },
      { event: "tool-finished", tool_call_id: "call_pay", output: "refunded 50" },
    ]);
    const messageStarts = second
      .filter((f) => f.method === "messages" && f.params.data["event"] === "message-start")
      .map((f) => [f.params.data["role"], f.params.data["tool_call_id"] ?? null]);
    // The two tool results written to state come whole, then the model's answer streams; the
    // earlier reply is not sent again.
    expect(messageStarts).toEqual([
      ["tool", "call_look"],
      ["tool", "call_pay"],
      ["ai", null],
    ]);
    const answer = second
      .filter((f) => f.method === "messages" && f.params.data["event"] === "content-block-delta")
      .map((f) => (f.params.data["delta"] as Json)["text"]);
    expect(answer).toEqual(["Refunded ", "50."]);

    await thread.close();
  });
});
