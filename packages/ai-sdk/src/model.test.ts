import type { LanguageModelV3CallOptions, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import {
  runAgentContracts,
  type RecordedRequest,
  type ScriptedTurn,
} from "@rein/core/testing/agent";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { fromGeneration, toModelMessages } from "./convert.ts";
import { fromAiSdk } from "./model.ts";

function usage(turn: ScriptedTurn) {
  return {
    inputTokens: {
      total: turn.usage?.inputTokens,
      noCache: undefined,
      cacheRead: undefined,
      cacheWrite: undefined,
    },
    outputTokens: { total: turn.usage?.outputTokens, text: undefined, reasoning: undefined },
  };
}

function streamParts(turn: ScriptedTurn, id: string): LanguageModelV3StreamPart[] {
  const words = (turn.text ?? "").split(/(?<= )/);
  return [
    { type: "stream-start", warnings: [] },
    { type: "response-metadata", id, modelId: "mock-model" },
    { type: "text-start", id: "t" },
    ...words.map((w): LanguageModelV3StreamPart => ({ type: "text-delta", id: "t", delta: w })),
    { type: "text-end", id: "t" },
    ...(turn.toolCalls ?? []).map((c): LanguageModelV3StreamPart => ({
      type: "tool-call",
      toolCallId: c.id,
      toolName: c.name,
      input: JSON.stringify(c.args),
    })),
    {
      type: "finish",
      usage: usage(turn),
      finishReason: { unified: turn.toolCalls ? "tool-calls" : "stop", raw: undefined },
    },
  ];
}

// The AI SDK's own mock language model, driven through generateText / streamText.
runAgentContracts({
  name: "the Vercel AI SDK (MockLanguageModelV3)",
  create(turns, { stream }) {
    const requests: RecordedRequest[] = [];
    let next = 0;
    const record = (options: LanguageModelV3CallOptions) => {
      requests.push({
        tools: (options.tools ?? []).map((t) => t.name),
        body: JSON.stringify(options.prompt),
      });
      const index = next++;
      return { turn: turns[index] ?? { text: "" }, id: `resp_${index}` };
    };
    const mock = new MockLanguageModelV3({
      doGenerate: (options) => {
        const { turn, id } = record(options);
        return Promise.resolve({
          content: [
            ...(turn.text ? [{ type: "text" as const, text: turn.text }] : []),
            ...(turn.toolCalls ?? []).map((c) => ({
              type: "tool-call" as const,
              toolCallId: c.id,
              toolName: c.name,
              input: JSON.stringify(c.args),
            })),
          ],
          finishReason: { unified: turn.toolCalls ? "tool-calls" : "stop", raw: undefined },
          usage: usage(turn),
          response: { id, modelId: "mock-model" },
          warnings: [],
        });
      },
      doStream: (options) => {
        const { turn, id } = record(options);
        return Promise.resolve({ stream: convertArrayToReadableStream(streamParts(turn, id)) });
      },
    });
    return { model: fromAiSdk(mock, { stream }), requests: () => requests };
  },
});

describe("AI SDK conversion", () => {
  it("keeps reasoning with its provider data, images and tool results across the round trip", () => {
    const messages = toModelMessages([
      {
        role: "user",
        content: [
          { type: "text", text: "What is in this photo?" },
          { type: "image", url: "https://example.com/a.png", mediaType: "image/png" },
        ],
      },
      {
        role: "assistant",
        content: [
          {
            type: "reasoning",
            text: "Look first.",
            providerOptions: { anthropic: { signature: "sig" } },
          },
          { type: "text", text: "Checking." },
        ],
        toolCalls: [{ id: "c1", name: "look", args: { zoom: 2 } }],
      },
      { role: "tool", toolCallId: "c1", name: "look", status: "done", content: "a cat" },
      { role: "tool", toolCallId: "c2", name: "look", status: "ignored", content: "declined" },
    ]);
    expect(messages).toHaveLength(3);
    expect(messages[1]).toEqual({
      role: "assistant",
      content: [
        {
          type: "reasoning",
          text: "Look first.",
          providerOptions: { anthropic: { signature: "sig" } },
        },
        { type: "text", text: "Checking." },
        { type: "tool-call", toolCallId: "c1", toolName: "look", input: { zoom: 2 } },
      ],
    });
    expect(messages[2]).toMatchObject({
      role: "tool",
      content: [
        { toolCallId: "c1", output: { type: "text", value: "a cat" } },
        { toolCallId: "c2", output: { type: "execution-denied", reason: "declined" } },
      ],
    });
    const back = fromGeneration(
      [
        {
          type: "reasoning",
          text: "Look first.",
          providerMetadata: { anthropic: { signature: "sig" } },
        },
        { type: "text", text: "Checking." },
      ],
      undefined,
      { id: "r1", modelId: "m" },
    );
    expect(back).toEqual({
      role: "assistant",
      content: [
        {
          type: "reasoning",
          text: "Look first.",
          providerOptions: { anthropic: { signature: "sig" } },
        },
        { type: "text", text: "Checking." },
      ],
      id: "r1",
      model: "m",
    });
  });
});
