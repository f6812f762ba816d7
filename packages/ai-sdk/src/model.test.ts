import { runAgentContracts } from "@rein/core/testing/agent";
import { describe, expect, it } from "vitest";
import { fromGeneration, toModelMessages } from "./convert.ts";
import { fromAiSdk } from "./model.ts";
import { answerOf, client, scriptedModel } from "./scripted.ts";

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// The AI SDK's own mock language model, driven through generateText / streamText.
runAgentContracts({
  name: "the Vercel AI SDK (its mock language model)",
  client,
  declinedAs: /execution-denied/,
  providerApprovals: {
    approvedAs: (id) =>
      new RegExp(`"type":"tool-approval-response","approvalId":"${id}","approved":true`),
    deniedAs: (id, reason) =>
      new RegExp(`"approvalId":"${id}","approved":false,"reason":"[^"]*${escape(reason)}"`),
  },
  create(turns, { stream }) {
    const scripted = scriptedModel(turns.map(answerOf), turns);
    return { model: fromAiSdk(scripted.model, { stream }), requests: scripted.requests };
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
