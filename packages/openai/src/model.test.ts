import { runAgentContracts } from "@rein/core/testing/agent";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { fromOpenAI } from "./model.ts";
import { recordedFetch } from "./recorded.ts";
import { fromResponse, toResponseInput } from "./responses.ts";
import { toChatMessages } from "./chat.ts";

for (const api of ["chat", "responses"] as const)
  runAgentContracts({
    name: `the OpenAI SDK, ${api === "chat" ? "chat completions" : "responses API"} (recorded fetch)`,
    create(turns, { stream }) {
      const recorded = recordedFetch(turns);
      const client = new OpenAI({ apiKey: "sk-test", fetch: recorded.fetch, maxRetries: 0 });
      return {
        model: fromOpenAI(client, { model: api === "chat" ? "gpt-4o" : "gpt-4.1", api, stream }),
        requests: () => recorded.requests,
      };
    },
  });

describe("OpenAI conversion", () => {
  it("keeps a reasoning item's id and encrypted content for the next turn (responses API)", () => {
    const message = fromResponse({
      id: "resp_9",
      object: "response",
      created_at: 1_764_500_000,
      model: "o4-mini-2025-04-16",
      status: "completed",
      output: [
        {
          type: "reasoning",
          id: "rs_1",
          summary: [{ type: "summary_text", text: "Check the policy first." }],
          encrypted_content: "gAAAA-opaque",
        },
        {
          type: "function_call",
          id: "fc_1",
          call_id: "call_9",
          name: "search_policy",
          arguments: '{"topic":"damage"}',
          status: "completed",
        },
      ],
      usage: {
        input_tokens: 100,
        input_tokens_details: { cached_tokens: 64 },
        output_tokens: 50,
        output_tokens_details: { reasoning_tokens: 40 },
        total_tokens: 150,
      },
    } as unknown as OpenAI.Responses.Response);
    expect(message.usage).toEqual({
      inputTokens: 100,
      outputTokens: 50,
      totalTokens: 150,
      reasoningTokens: 40,
      cachedInputTokens: 64,
    });
    expect(toResponseInput([message])).toEqual([
      {
        type: "reasoning",
        id: "rs_1",
        summary: [{ type: "summary_text", text: "Check the policy first." }],
        encrypted_content: "gAAAA-opaque",
      },
      {
        type: "function_call",
        call_id: "call_9",
        name: "search_policy",
        arguments: '{"topic":"damage"}',
      },
    ]);
  });

  it("sends images and files as content parts (chat completions)", () => {
    expect(
      toChatMessages([
        {
          role: "user",
          content: [
            { type: "text", text: "Is this the broken mug?" },
            { type: "image", data: "iVBORw0KGgo=", mediaType: "image/png" },
            {
              type: "file",
              data: "JVBERi0=",
              mediaType: "application/pdf",
              filename: "receipt.pdf",
            },
          ],
        },
      ]),
    ).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Is this the broken mug?" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
          {
            type: "file",
            file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "receipt.pdf" },
          },
        ],
      },
    ]);
  });
});
