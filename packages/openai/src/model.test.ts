import { MemorySaver, ModelResponseError, agent, assemble, type ModelDelta } from "@rein/core";
import { runAgentContracts } from "@rein/core/testing/agent";
import OpenAI from "openai";
import { VERSION } from "openai/version";
import { describe, expect, it } from "vitest";
import { fromOpenAI } from "./model.ts";
import { recordedFetch } from "./recorded.ts";
import { fromResponse, toResponseInput } from "./responses.ts";
import { toChatMessages } from "./chat.ts";

for (const api of ["chat", "responses"] as const)
  runAgentContracts({
    name: `the OpenAI SDK, ${api === "chat" ? "chat completions" : "responses API"} (recorded fetch)`,
    client: { name: "openai", version: VERSION },
    ...(api === "chat"
      ? {
          gaps: {
            failedResponse:
              "chat completions report a failure before the answer as an HTTP 500, which the SDK raises as its InternalServerError",
          },
        }
      : {
          providerApprovals: {
            approvedAs: (id: string) =>
              new RegExp(
                `"type":"mcp_approval_response","approval_request_id":"${id}","approve":true`,
              ),
            deniedAs: (id: string, reason: string) =>
              new RegExp(
                `"approval_request_id":"${id}","approve":false,"reason":"[^"]*${reason.replace(/\./g, "\\.")}"`,
              ),
          },
        }),
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

describe("OpenAI stream failures", () => {
  it("an `error` event of a responses stream is a model_failed error with the provider's code", async () => {
    // The wire format of a responses stream that fails after it started.
    const events = [
      {
        type: "response.created",
        sequence_number: 0,
        response: { id: "resp_e", status: "in_progress", output: [] },
      },
      {
        type: "response.output_text.delta",
        sequence_number: 1,
        item_id: "msg_e",
        output_index: 0,
        content_index: 0,
        delta: "Refun",
        logprobs: [],
      },
      {
        type: "error",
        sequence_number: 2,
        code: "rate_limit_exceeded",
        message: "Rate limit reached.",
        param: null,
      },
    ];
    const body = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
    const client = new OpenAI({
      apiKey: "sk-test",
      maxRetries: 0,
      fetch: () =>
        Promise.resolve(new Response(body, { headers: { "content-type": "text/event-stream" } })),
    });
    const model = fromOpenAI(client, { model: "gpt-4.1", api: "responses", stream: true });
    const error = await assemble(
      (await model([{ role: "user", content: "hi" }], {
        tools: [],
        signal: new AbortController().signal,
      })) as AsyncIterable<ModelDelta>,
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelResponseError);
    expect(error).toMatchObject({
      code: "model_failed",
      details: { client: "openai", reason: "error", providerCode: "rate_limit_exceeded" },
    });
  });

  it("a rate limit mid-stream reaches the run's error with the provider's code and retry hint (chat)", async () => {
    // The wire format of a chat stream the API ends with an error object.
    const chunk = {
      id: "chatcmpl-r",
      object: "chat.completion.chunk",
      created: 1_764_500_000,
      model: "gpt-4o-2024-08-06",
      choices: [{ index: 0, delta: { role: "assistant", content: "Refun" }, finish_reason: null }],
    };
    const failure = {
      error: {
        message: "Rate limit reached for gpt-4o on requests per min.",
        type: "requests",
        param: null,
        code: "rate_limit_exceeded",
      },
    };
    const body = [chunk, failure].map((e) => `data: ${JSON.stringify(e)}\n\n`).join("");
    const client = new OpenAI({
      apiKey: "sk-test",
      maxRetries: 0,
      fetch: () =>
        Promise.resolve(new Response(body, { headers: { "content-type": "text/event-stream" } })),
    });
    const graph = agent({
      model: fromOpenAI(client, { model: "gpt-4o", stream: true }),
      tools: [],
      checkpointer: new MemorySaver(),
    });
    const result = await graph.invoke(
      { messages: [{ role: "user", content: "Refund order 1042" }] },
      { threadId: "rate-limited" },
    );
    expect(result.status).toBe("error");
    expect(result.error).toMatchObject({
      code: "model_failed",
      details: {
        client: "openai",
        reason: "error",
        providerCode: "rate_limit_exceeded",
        retryable: true,
        provider: { type: "requests" },
      },
    });
  });
});

describe("OpenAI hosted MCP", () => {
  it("a hosted MCP tool in body.tools is sent beside the agent's own tools, and a failed mcp_call's error object is replayed intact", async () => {
    const mcpError = {
      type: "mcp_tool_execution_error",
      content: [{ type: "text", text: "ticket locked" }],
    };
    // A response of the API (openai 7's shape): the hosted server's call failed.
    const first = {
      id: "resp_m1",
      object: "response",
      created_at: 1_764_500_000,
      status: "completed",
      model: "gpt-4.1-2025-04-14",
      output: [
        {
          type: "mcp_call",
          id: "mcp_1",
          name: "delete_ticket",
          arguments: '{"ticket":"T-9"}',
          server_label: "desk",
          error: mcpError,
          output: null,
          status: "failed",
        },
        {
          type: "message",
          id: "msg_1",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: "The ticket is locked.", annotations: [] }],
        },
      ],
      usage: null,
    };
    const bodies: Record<string, unknown>[] = [];
    const client = new OpenAI({
      apiKey: "sk-test",
      maxRetries: 0,
      fetch: (_input: string | URL | Request, init?: RequestInit) => {
        bodies.push(JSON.parse(init?.body as string) as Record<string, unknown>);
        return Promise.resolve(Response.json({ ...first, id: `resp_m${bodies.length}` }));
      },
    });
    const hosted = {
      type: "mcp",
      server_label: "desk",
      server_url: "https://desk.example.com/mcp",
      require_approval: "never",
    };
    const model = fromOpenAI(client, {
      model: "gpt-4.1",
      api: "responses",
      body: { tools: [hosted] },
    });
    const own = [
      { name: "refund", description: "Refund an order.", parameters: { type: "object" } },
    ];
    const signal = new AbortController().signal;
    const answer = await model([{ role: "user", content: "Delete T-9" }], { tools: own, signal });
    expect((bodies[0]?.tools as { type: string }[]).map((t) => t.type)).toEqual([
      "mcp",
      "function",
    ]);
    expect(bodies[0]?.tools).toContainEqual(hosted);
    await model([{ role: "user", content: "Delete T-9" }, answer as never], { tools: own, signal });
    const replayed = (bodies[1]?.input as { type: string }[]).find((i) => i.type === "mcp_call");
    expect(replayed).toMatchObject({ type: "mcp_call", id: "mcp_1", error: mcpError });
    expect(JSON.stringify(bodies[1])).not.toContain("[object Object]");
  });
});
