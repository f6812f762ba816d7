/**
 * The Responses API: Rein messages as input items (reasoning items kept with their id and
 * encrypted content so a follow-up turn is accepted), a response back as a Rein message.
 */
import type {
  AssistantMessage,
  ContentPart,
  Message,
  ModelDelta,
  ReasoningPart,
  ToolSpec,
  Usage,
} from "@rein/core";
import type OpenAI from "openai";
import {
  joinText,
  mediaUrl,
  midStream,
  modelFailure,
  toolCallFrom,
  truncatedStream,
} from "./shared.ts";

type Item = OpenAI.Responses.ResponseInputItem;
type InputContent = OpenAI.Responses.ResponseInputContent;

/** Where a reasoning item's id and encrypted content are kept on a Rein reasoning part. */
interface OpenAIReasoningMeta {
  itemId: string;
  encryptedContent?: string;
}

function reasoningMeta(p: ReasoningPart): OpenAIReasoningMeta | undefined {
  const meta = p.providerOptions?.openai as Partial<OpenAIReasoningMeta> | undefined;
  return typeof meta?.itemId === "string" ? (meta as OpenAIReasoningMeta) : undefined;
}

function userContent(parts: readonly ContentPart[]): InputContent[] {
  const out: InputContent[] = [];
  for (const p of parts) {
    if (p.type === "text") out.push({ type: "input_text", text: p.text });
    else if (p.type === "image")
      out.push({ type: "input_image", image_url: mediaUrl(p), detail: "auto" });
    else if (p.type === "file")
      out.push(
        p.url !== undefined
          ? { type: "input_file", file_url: p.url }
          : {
              type: "input_file",
              file_data: mediaUrl(p),
              ...(p.filename ? { filename: p.filename } : {}),
            },
      );
  }
  return out;
}

/** Rein messages as Responses API input items. */
export function toResponseInput(messages: readonly Message[]): Item[] {
  const items: Item[] = [];
  for (const m of messages) {
    if (m.role === "assistant") {
      const parts: readonly ContentPart[] =
        typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
      for (const p of parts) {
        const meta = p.type === "reasoning" ? reasoningMeta(p) : undefined;
        if (p.type === "reasoning" && meta)
          items.push({
            type: "reasoning",
            id: meta.itemId,
            summary: [{ type: "summary_text", text: p.text }],
            ...(meta.encryptedContent ? { encrypted_content: meta.encryptedContent } : {}),
          });
      }
      const text = joinText(m.content);
      if (text !== "") items.push({ role: "assistant", content: text });
      items.push(...providerItems(m));
      for (const c of m.toolCalls ?? [])
        if (!c.providerExecuted)
          items.push({
            type: "function_call",
            call_id: c.id,
            name: c.name,
            arguments: JSON.stringify(c.args),
          });
    } else if (m.role === "tool" && m.approval)
      // The reviewer's answer to a hosted MCP server's approval request.
      items.push({
        type: "mcp_approval_response",
        approval_request_id: m.approval.approvalId,
        approve: m.approval.approved,
        ...(m.approval.reason !== undefined ? { reason: m.approval.reason } : {}),
      });
    else if (m.role === "tool")
      items.push({
        type: "function_call_output",
        call_id: m.toolCallId,
        output: joinText(m.content),
      });
    else
      items.push({
        role: m.role,
        content: typeof m.content === "string" ? m.content : userContent(m.content),
      });
  }
  return items;
}

/** Where a hosted MCP item's server is kept on a Rein approval request or provider result. */
interface McpMeta {
  serverLabel: string;
}

function mcpMeta(
  options: Record<string, Record<string, unknown>> | undefined,
): McpMeta | undefined {
  const meta = options?.openai as Partial<McpMeta> | undefined;
  return typeof meta?.serverLabel === "string" ? { serverLabel: meta.serverLabel } : undefined;
}

/** A hosted MCP server's approval requests and calls of an assistant turn, as input items. */
function providerItems(m: AssistantMessage): Item[] {
  const items: Item[] = [];
  const calls = new Map((m.toolCalls ?? []).map((c) => [c.id, c]));
  for (const r of m.approvalRequests ?? []) {
    const meta = mcpMeta(r.providerOptions);
    const call = calls.get(r.toolCallId);
    if (meta && call)
      items.push({
        type: "mcp_approval_request",
        id: r.approvalId,
        name: call.name,
        arguments: JSON.stringify(call.args),
        server_label: meta.serverLabel,
      });
  }
  for (const r of m.providerResults ?? []) {
    const meta = mcpMeta(r.providerOptions);
    const call = calls.get(r.toolCallId);
    if (meta && call)
      items.push({
        type: "mcp_call",
        id: r.toolCallId,
        name: call.name,
        arguments: JSON.stringify(call.args),
        server_label: meta.serverLabel,
        // The error as the API sent it: a string (openai 6) or an object (openai 7's
        // McpToolCallError), never "[object Object]".
        ...(r.isError
          ? { error: r.output as never }
          : { output: typeof r.output === "string" ? r.output : JSON.stringify(r.output) }),
      });
  }
  return items;
}

/**
 * A hosted MCP item of a response (an approval request, or a call the server ran) on `out`:
 * the call is provider-executed, never run by Rein.
 */
function addMcpItem(out: AssistantMessage, item: OpenAI.Responses.ResponseOutputItem): void {
  if (item.type !== "mcp_approval_request" && item.type !== "mcp_call") return;
  const openai = { openai: { serverLabel: item.server_label } };
  const call = toolCallFrom(item.id, item.name, item.arguments);
  (out.toolCalls ??= []).push({ ...call, providerExecuted: true });
  if (item.type === "mcp_approval_request")
    (out.approvalRequests ??= []).push({
      approvalId: item.id,
      toolCallId: item.id,
      providerOptions: openai,
    });
  else
    (out.providerResults ??= []).push({
      toolCallId: item.id,
      name: item.name,
      output: item.error ?? item.output ?? null,
      ...(item.error ? { isError: true } : {}),
      providerOptions: openai,
    });
}

/** Tools as Responses API function tools. */
export function toResponseTools(tools: readonly ToolSpec[]): OpenAI.Responses.FunctionTool[] {
  return tools.map((t) => ({
    type: "function",
    name: t.name,
    description: t.description,
    parameters: t.parameters,
    strict: false,
  }));
}

/** Responses API usage as Rein usage. */
export function fromResponseUsage(
  u: OpenAI.Responses.ResponseUsage | null | undefined,
): Usage | undefined {
  if (!u) return undefined;
  const out: Usage = {
    inputTokens: u.input_tokens,
    outputTokens: u.output_tokens,
    totalTokens: u.total_tokens,
  };
  const reasoning = u.output_tokens_details?.reasoning_tokens;
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  const cached = u.input_tokens_details?.cached_tokens;
  if (cached !== undefined) out.cachedInputTokens = cached;
  return out;
}

/**
 * The error of a response that failed or stopped incomplete (`status` "failed" or "incomplete",
 * as a whole body or in a `response.failed` / `response.incomplete` event).
 */
export function responseError(r: OpenAI.Responses.Response): Error | undefined {
  if (r.status === "failed")
    return modelFailure(
      "responses",
      "failed",
      `the response failed: ${r.error?.message ?? "no reason given"}`,
      r.error?.code,
      r.id,
    );
  if (r.status === "incomplete") {
    const reason = r.incomplete_details?.reason;
    return modelFailure(
      "responses",
      "incomplete",
      `the response stopped incomplete (${reason ?? "no reason given"})`,
      reason,
      r.id,
    );
  }
  return undefined;
}

/** A response's output items as one Rein assistant message. */
export function fromResponse(r: OpenAI.Responses.Response): AssistantMessage {
  const failed = responseError(r);
  if (failed) throw failed;
  const parts: ContentPart[] = [];
  const out: AssistantMessage = { role: "assistant", content: parts, id: r.id, model: r.model };
  for (const item of r.output) {
    if (item.type === "reasoning")
      parts.push({
        type: "reasoning",
        text: item.summary.map((s) => s.text).join("\n"),
        providerOptions: {
          openai: {
            itemId: item.id,
            ...(item.encrypted_content ? { encryptedContent: item.encrypted_content } : {}),
          },
        },
      });
    else if (item.type === "message") {
      for (const c of item.content)
        if (c.type === "output_text") parts.push({ type: "text", text: c.text });
    } else if (item.type === "function_call")
      (out.toolCalls ??= []).push(toolCallFrom(item.call_id, item.name, item.arguments));
    else addMcpItem(out, item);
  }
  if (parts.length === 1 && parts[0]?.type === "text") out.content = parts[0].text;
  else if (parts.length === 0) out.content = "";
  const usage = fromResponseUsage(r.usage);
  if (usage) out.usage = usage;
  return out;
}

/** Streamed events as deltas: text as it comes; calls, usage and id from the completed response. */
export async function* responseDeltas(
  events: AsyncIterable<OpenAI.Responses.ResponseStreamEvent>,
): AsyncGenerator<ModelDelta> {
  let completed = false;
  let id: string | undefined;
  for await (const event of midStream("responses", events)) {
    if (event.type === "response.created") id = event.response.id;
    if (event.type === "response.failed" || event.type === "response.incomplete")
      throw responseError(event.response) ?? new Error(`OpenAI sent ${event.type}.`);
    if (event.type === "error")
      throw modelFailure(
        "responses",
        "error",
        `the stream reported an error: ${event.message}`,
        event.code,
        id,
        { retryable: event.code === "rate_limit_exceeded" || event.code === "server_error" },
      );
    if (event.type === "response.output_text.delta") yield { type: "text", text: event.delta };
    else if (event.type === "response.reasoning_summary_text.delta")
      yield { type: "reasoning", text: event.delta };
    else if (event.type === "response.completed") {
      completed = true;
      const message = fromResponse(event.response);
      for (const call of message.toolCalls ?? []) yield { type: "tool-call", call };
      for (const request of message.approvalRequests ?? [])
        yield { type: "approval-request", request };
      for (const result of message.providerResults ?? []) yield { type: "provider-result", result };
      if (message.usage) yield { type: "usage", usage: message.usage };
      yield { type: "id", id: event.response.id, model: event.response.model };
    }
  }
  if (!completed) throw truncatedStream("responses", id);
}
