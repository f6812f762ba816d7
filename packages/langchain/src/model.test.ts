import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import { FakeStreamingChatModel } from "@langchain/core/utils/testing";
import {
  runAgentContracts,
  type RecordedRequest,
  type ScriptedTurn,
} from "@rein/core/testing/agent";
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
    const message = this.message(turn, this.next - 1);
    return Promise.resolve({ generations: [{ text: turn.text ?? "", message }] });
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const turn = this.take(messages, options);
    const id = `lc_${this.next - 1}`;
    for (const word of (turn.text ?? "").split(/(?<= )/)) {
      const chunk = new ChatGenerationChunk({
        message: new AIMessageChunk({ id, content: word }),
        text: word,
      });
      yield chunk;
      await runManager?.handleLLMNewToken(word);
    }
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
      }),
      text: "",
    });
  }
}

runAgentContracts({
  name: "LangChain.js chat models (FakeStreamingChatModel)",
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
