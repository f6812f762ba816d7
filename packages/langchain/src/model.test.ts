import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import {
  AIMessage,
  AIMessageChunk,
  type BaseMessage,
  type ToolMessage as LcToolMessage,
} from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import { FakeStreamingChatModel } from "@langchain/core/utils/testing";
import {
  runAgentContracts,
  type RecordedRequest,
  type ScriptedTurn,
} from "@rein/core/testing/agent";
import langchainPackage from "@langchain/core/package.json" with { type: "json" };
import { describe, expect, it } from "vitest";
import { fromAIMessage, toLangChainMessages } from "./convert.ts";
import { fromLangChain } from "./model.ts";

/**
 * LangChain's fake streaming chat model serves one fixed response; this one serves a script,
 * one turn per call, through the same BaseChatModel machinery (bindTools, invoke, stream).
 */
class ScriptedChatModel extends FakeStreamingChatModel {
  next = 0;
  readonly requests: RecordedRequest[] = [];

  constructor(private readonly turns: ScriptedTurn[]) {
    super({ sleep: 0 });
  }

  override bindTools(tools: Parameters<FakeStreamingChatModel["bindTools"]>[0]) {
    // The base class returns a fresh model; keep this one so the script advances.
    const config = { tools } as Partial<this["ParsedCallOptions"]>;
    return this.withConfig(config);
  }

  private take(messages: BaseMessage[], options: this["ParsedCallOptions"]): ScriptedTurn {
    const tools = ((options as { tools?: { name: string }[] }).tools ?? []).map((t) => t.name);
    this.requests.push({ tools, body: JSON.stringify(messages.map((m) => m.toDict())) });
    return this.turns[this.next++] ?? { text: "" };
  }

  private message(turn: ScriptedTurn, index: number): AIMessage {
    return new AIMessage({
      id: `lc_${index}`,
      content: turn.text ?? "",
      // A provider that stopped at its token limit says so in the response metadata.
      ...(turn.fail === "cut" ? { response_metadata: { finish_reason: "length" } } : {}),
      tool_calls: (turn.toolCalls ?? []).map((c) => ({ ...c, type: "tool_call" as const })),
      ...(turn.usage
        ? {
            usage_metadata: {
              input_tokens: turn.usage.inputTokens,
              output_tokens: turn.usage.outputTokens,
              total_tokens: turn.usage.inputTokens + turn.usage.outputTokens,
            },
          }
        : {}),
    });
  }

  override _generate(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
  ): Promise<ChatResult> {
    const turn = this.take(messages, options);
    if (turn.hang) return hangUntilAborted(options.signal);
    // A provider's failure before the answer: the chat model class throws its client's error.
    if (turn.fail === "error") return Promise.reject(new Error("500 The server had an error."));
    const message = this.message(turn, this.next - 1);
    return Promise.resolve({ generations: [{ text: turn.text ?? "", message }] });
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const turn = this.take(messages, options);
    if (turn.hang) await hangUntilAborted(options.signal);
    const id = `lc_${this.next - 1}`;
    for (const word of (turn.text ?? "").split(/(?<= )/)) {
      const chunk = new ChatGenerationChunk({
        message: new AIMessageChunk({ id, content: word }),
        text: word,
      });
      yield chunk;
      await runManager?.handleLLMNewToken(word);
    }
    // A failure after the stream started: the provider's error event, thrown as it is read.
    if (turn.fail === "error") throw new Error("The server had an error while streaming.");
    // The connection goes away mid-body, as undici reports it to the provider's client.
    if (turn.fail === "dropped") throw new TypeError("terminated");
    // A stream cut off cleanly: no last chunk with its finish reason.
    if (turn.fail === "truncated") return;
    const last = this.message(turn, this.next - 1);
    yield new ChatGenerationChunk({
      message: new AIMessageChunk({
        id,
        content: "",
        tool_call_chunks: (turn.toolCalls ?? []).map((c, index) => ({
          id: c.id,
          name: c.name,
          args: JSON.stringify(c.args),
          index,
          type: "tool_call_chunk" as const,
        })),
        ...(last.usage_metadata ? { usage_metadata: last.usage_metadata } : {}),
        // The last chunk carries the finish reason, as LangChain's provider classes send it.
        response_metadata: {
          finish_reason: turn.toolCalls ? "tool_calls" : "stop",
          ...last.response_metadata,
        },
      }),
      text: "",
    });
  }
}

function hangUntilAborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_, reject) =>
    signal?.addEventListener("abort", () => reject(new Error("AbortError: aborted"))),
  );
}

runAgentContracts({
  name: "LangChain.js chat models (FakeStreamingChatModel)",
  client: { name: "@langchain/core", version: langchainPackage.version },
  // The model reads a declined call's status, not only its text.
  declinedAs: /"status":"error"/,
  gaps: {
    failedResponse:
      "a chat model reports a failure before the answer by throwing its client's error (kept as it is)",
  },
  create(turns, { stream }) {
    const chat = new ScriptedChatModel(turns);
    return { model: fromLangChain(chat, { stream }), requests: () => chat.requests };
  },
});

describe("LangChain conversion", () => {
  it("keeps images, reasoning signatures, tool calls and error status across the round trip", () => {
    const lc = toLangChainMessages([
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image", data: "iVBORw0KGgo=", mediaType: "image/png" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "Look closer.", signature: "sig-1" },
          { type: "text", text: "Zooming." },
        ],
        toolCalls: [{ id: "c1", name: "zoom", args: { level: 2 } }],
        id: "msg_1",
        usage: { inputTokens: 5, outputTokens: 7, totalTokens: 12 },
      },
      { role: "tool", toolCallId: "c1", name: "zoom", status: "error", content: "too far" },
    ]);
    expect(lc.map((m) => m.type)).toEqual(["human", "ai", "tool"]);
    expect(lc[0]?.content).toEqual([
      { type: "text", text: "What is this?" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
    ]);
    expect(lc[2]).toMatchObject({ tool_call_id: "c1", status: "error", content: "too far" });
    expect(fromAIMessage(lc[1] as AIMessage)).toEqual({
      role: "assistant",
      content: [
        { type: "reasoning", text: "Look closer.", signature: "sig-1" },
        { type: "text", text: "Zooming." },
      ],
      toolCalls: [{ id: "c1", name: "zoom", args: { level: 2 } }],
      id: "msg_1",
      usage: { inputTokens: 5, outputTokens: 7, totalTokens: 12 },
    });
  });
});

describe("LangChain declines", () => {
  it("a rejected call and an answer in the tool's place reach LangChain as ToolMessages with status error", () => {
    const review = { actor: "ana", interruptId: "i1" };
    const lc = toLangChainMessages([
      { role: "tool", toolCallId: "c1", name: "refund", status: "done", content: "ok" },
      {
        role: "tool",
        toolCallId: "c2",
        name: "refund",
        status: "ignored",
        content: "The reviewer declined this call: over the limit",
        review: { ...review, decision: "ignore" },
      },
      {
        role: "tool",
        toolCallId: "c3",
        name: "refund",
        status: "responded",
        content: "Refunded by hand.",
        review: { ...review, decision: "respond" },
      },
    ]);
    expect(lc.map((m) => (m as LcToolMessage).status)).toEqual(["success", "error", "error"]);
    expect(lc[1]?.content).toBe("The reviewer declined this call: over the limit");
  });
});
