/**
 * Test support: OpenAI API responses in the wire format (JSON bodies and server-sent event
 * streams, shaped as the API returns them), served by a custom `fetch` that records requests.
 */
import type { RecordedRequest, ScriptedTurn } from "@rein/core/testing/agent";

const created = 1_764_500_000;

function usageChat(turn: ScriptedTurn) {
  const input = turn.usage?.inputTokens ?? 0;
  const output = turn.usage?.outputTokens ?? 0;
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function usageResponses(turn: ScriptedTurn) {
  const input = turn.usage?.inputTokens ?? 0;
  const output = turn.usage?.outputTokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}

/** The error object the API sends for a failure on its side. */
const serverError = {
  message: "The server had an error while processing your request. Sorry about that!",
  type: "server_error",
  param: null,
  code: null,
};

/** A `chat.completion` body. */
export function chatCompletion(turn: ScriptedTurn, index: number): unknown {
  const calls = turn.toolCalls ?? [];
  return {
    id: `chatcmpl-rec${index}`,
    object: "chat.completion",
    created,
    model: "gpt-4o-2024-08-06",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: turn.text ?? null,
          refusal: null,
          annotations: [],
          ...(calls.length > 0
            ? {
                tool_calls: calls.map((c) => ({
                  id: c.id,
                  type: "function",
                  function: { name: c.name, arguments: JSON.stringify(c.args) },
                })),
              }
            : {}),
        },
        logprobs: null,
        finish_reason: turn.fail === "cut" ? "length" : calls.length > 0 ? "tool_calls" : "stop",
      },
    ],
    usage: usageChat(turn),
    service_tier: "default",
    system_fingerprint: "fp_07871e2ad8",
  };
}

/** The `chat.completion.chunk` events of a streamed completion (usage in the last chunk). */
export function chatChunks(turn: ScriptedTurn, index: number): unknown[] {
  const base = {
    id: `chatcmpl-rec${index}`,
    object: "chat.completion.chunk",
    created,
    model: "gpt-4o-2024-08-06",
    system_fingerprint: "fp_07871e2ad8",
  };
  const chunk = (delta: unknown, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    usage: null,
  });
  const calls = turn.toolCalls ?? [];
  const out: unknown[] = [chunk({ role: "assistant", content: "", refusal: null })];
  for (const word of (turn.text ?? "").split(/(?<= )/)) out.push(chunk({ content: word }));
  calls.forEach((c, i) => {
    const args = JSON.stringify(c.args);
    const half = Math.floor(args.length / 2);
    out.push(
      chunk({
        tool_calls: [
          { index: i, id: c.id, type: "function", function: { name: c.name, arguments: "" } },
        ],
      }),
      chunk({ tool_calls: [{ index: i, function: { arguments: args.slice(0, half) } }] }),
      chunk({ tool_calls: [{ index: i, function: { arguments: args.slice(half) } }] }),
    );
  });
  // A failure after the stream started: the API sends an error object as one more event.
  if (turn.fail === "error") {
    out.push({ error: serverError });
    return out;
  }
  // A stream cut off before its end: no finish reason, no usage, no `[DONE]`.
  if (turn.fail === "truncated" || turn.fail === "dropped") return out;
  out.push(chunk({}, turn.fail === "cut" ? "length" : calls.length > 0 ? "tool_calls" : "stop"));
  out.push({ ...base, choices: [], usage: usageChat(turn) });
  return out;
}

/** A hosted MCP server's items: its approval request, or (once approved) its call's result. */
function mcpItems(turn: ScriptedTurn): unknown[] {
  const p = turn.providerCall;
  if (!p) return [];
  const item = { name: p.name, arguments: JSON.stringify(p.args), server_label: "desk" };
  if (p.output === undefined) return [{ type: "mcp_approval_request", id: p.approvalId, ...item }];
  return [
    {
      type: "mcp_call",
      id: p.id,
      ...item,
      approval_request_id: p.approvalId,
      output: p.output,
      error: null,
      status: "completed",
    },
  ];
}

/** A `response` body of the Responses API. */
export function response(turn: ScriptedTurn, index: number): Record<string, unknown> {
  return {
    id: `resp_rec${index}`,
    object: "response",
    created_at: created,
    status: turn.fail === "error" ? "failed" : turn.fail === "cut" ? "incomplete" : "completed",
    error: turn.fail === "error" ? { code: "server_error", message: serverError.message } : null,
    incomplete_details: turn.fail === "cut" ? { reason: "max_output_tokens" } : null,
    instructions: null,
    model: "gpt-4.1-2025-04-14",
    output: [
      ...(turn.text
        ? [
            {
              type: "message",
              id: `msg_rec${index}`,
              status: "completed",
              role: "assistant",
              content: [{ type: "output_text", text: turn.text, annotations: [], logprobs: [] }],
            },
          ]
        : []),
      ...mcpItems(turn),
      ...(turn.toolCalls ?? []).map((c) => ({
        type: "function_call",
        id: `fc_${c.id}`,
        call_id: c.id,
        name: c.name,
        arguments: JSON.stringify(c.args),
        status: "completed",
      })),
    ],
    parallel_tool_calls: true,
    temperature: 1,
    tool_choice: "auto",
    tools: [],
    top_p: 1,
    usage: usageResponses(turn),
  };
}

/** The events of a streamed response. */
export function responseEvents(turn: ScriptedTurn, index: number): unknown[] {
  const full = response(turn, index);
  let seq = 0;
  const events: unknown[] = [
    {
      type: "response.created",
      sequence_number: seq++,
      response: { ...full, status: "in_progress", output: [] },
    },
  ];
  for (const word of (turn.text ?? "").split(/(?<= )/))
    if (word !== "")
      events.push({
        type: "response.output_text.delta",
        sequence_number: seq++,
        item_id: `msg_rec${index}`,
        output_index: 0,
        content_index: 0,
        delta: word,
        logprobs: [],
      });
  // A stream cut off before its end: no terminal event.
  if (turn.fail === "truncated" || turn.fail === "dropped") return events;
  const end =
    turn.fail === "error"
      ? "response.failed"
      : turn.fail === "cut"
        ? "response.incomplete"
        : "response.completed";
  events.push({ type: end, sequence_number: seq++, response: full });
  return events;
}

function sse(events: readonly unknown[], named: boolean, whole: boolean): string {
  return (
    events
      .map((e) =>
        named
          ? `event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`
          : `data: ${JSON.stringify(e)}\n\n`,
      )
      .join("") + (named || !whole ? "" : "data: [DONE]\n\n")
  );
}

/**
 * A response body of `text`; `drop` breaks the connection after it, as undici reports a peer
 * that went away mid-body (`TypeError: terminated`).
 */
function bodyOf(text: string, drop: boolean): string | ReadableStream<Uint8Array> {
  if (!drop) return text;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      controller.error(new TypeError("terminated"));
    },
  });
}

function hangUntilAborted(signal: AbortSignal | null | undefined): Promise<never> {
  return new Promise((_, reject) =>
    signal?.addEventListener("abort", () =>
      reject(new DOMException("This operation was aborted", "AbortError")),
    ),
  );
}

/**
 * A `fetch` for the OpenAI client that answers the scripted turns in order, in the format of
 * the endpoint called (JSON or a stream), and records each request body.
 */
export function recordedFetch(turns: readonly ScriptedTurn[]): {
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  requests: RecordedRequest[];
} {
  const requests: RecordedRequest[] = [];
  let next = 0;
  const fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const body = JSON.parse(typeof init?.body === "string" ? init.body : "{}") as {
      stream?: boolean;
      tools?: { name?: string; function?: { name: string } }[];
    };
    requests.push({
      tools: (body.tools ?? []).map((t) => t.function?.name ?? t.name ?? ""),
      body: JSON.stringify(body),
    });
    const index = next++;
    const turn = turns[index] ?? { text: "" };
    const responses = url.endsWith("/responses");
    // A provider that never answers: the fetch rejects when the client aborts it, as fetch does.
    if (turn.hang) return hangUntilAborted(init?.signal);
    // Chat Completions has no failed body: a failure before the answer is an HTTP 500.
    if (turn.fail === "error" && !body.stream && !responses)
      return Promise.resolve(Response.json({ error: serverError }, { status: 500 }));
    if (body.stream)
      return Promise.resolve(
        new Response(
          bodyOf(
            sse(
              responses ? responseEvents(turn, index) : chatChunks(turn, index),
              responses,
              turn.fail === undefined || turn.fail === "cut",
            ),
            turn.fail === "dropped",
          ),
          { status: 200, headers: { "content-type": "text/event-stream" } },
        ),
      );
    return Promise.resolve(
      Response.json(responses ? response(turn, index) : chatCompletion(turn, index), {
        headers: { "x-request-id": `req_${index}` },
      }),
    );
  };
  return { fetch, requests };
}
