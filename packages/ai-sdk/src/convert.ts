/**
 * Lossless conversion between Rein messages and the AI SDK's `ModelMessage`s, and from a
 * generation's content back to a Rein assistant message.
 */
import {
  ModelResponseError,
  type ApprovalRequest,
  type AssistantMessage,
  type ContentPart,
  type Message,
  type ProviderToolResult,
  type ToolCall,
  type ToolMessage,
  type Usage,
} from "@rein/core";
import type { AssistantModelMessage, LanguageModelUsage, ModelMessage, ToolModelMessage } from "ai";

type AiAssistantPart = Exclude<AssistantModelMessage["content"], string>[number];
type AiUserParts = Exclude<Extract<ModelMessage, { role: "user" }>["content"], string>;

function mediaSource(part: { url?: string; data?: string }): string | URL {
  if (part.url !== undefined) return new URL(part.url);
  return part.data ?? "";
}

function userParts(parts: readonly ContentPart[]): AiUserParts {
  const out: AiUserParts = [];
  for (const p of parts) {
    if (p.type === "text") out.push({ type: "text", text: p.text });
    else if (p.type === "image")
      out.push({
        type: "image",
        image: mediaSource(p),
        ...(p.mediaType ? { mediaType: p.mediaType } : {}),
      });
    else if (p.type === "file")
      out.push({
        type: "file",
        data: mediaSource(p),
        mediaType: p.mediaType,
        ...(p.filename ? { filename: p.filename } : {}),
      });
    // Reasoning only exists in assistant turns; a user message never carries it.
  }
  return out;
}

function assistantParts(message: AssistantMessage): AiAssistantPart[] {
  const out: AiAssistantPart[] = [];
  const parts: readonly ContentPart[] =
    typeof message.content === "string"
      ? message.content === ""
        ? []
        : [{ type: "text", text: message.content }]
      : message.content;
  for (const p of parts) {
    if (p.type === "text") out.push({ type: "text", text: p.text });
    else if (p.type === "reasoning")
      out.push({
        type: "reasoning",
        text: p.text,
        ...(p.providerOptions ? { providerOptions: p.providerOptions as never } : {}),
      });
    else if (p.type === "file" || p.type === "image")
      out.push({
        type: "file",
        data: mediaSource(p),
        mediaType: p.mediaType ?? "application/octet-stream",
      });
  }
  for (const call of message.toolCalls ?? [])
    out.push({
      type: "tool-call",
      toolCallId: call.id,
      toolName: call.name,
      input: call.args,
      ...(call.providerExecuted ? { providerExecuted: true } : {}),
    });
  // The provider's approval requests and its own results go back as it sent them: the SDK pairs
  // each approval response with its request, and the provider reads its results in its history.
  for (const r of message.approvalRequests ?? [])
    out.push({ type: "tool-approval-request", approvalId: r.approvalId, toolCallId: r.toolCallId });
  for (const r of message.providerResults ?? [])
    out.push({
      type: "tool-result",
      toolCallId: r.toolCallId,
      toolName: r.name,
      output: r.isError
        ? { type: "error-json", value: r.output as never }
        : { type: "json", value: r.output as never },
    });
  return out;
}

function toolResult(message: ToolMessage): ToolModelMessage {
  const text =
    typeof message.content === "string"
      ? message.content
      : message.content.map((p) => (p.type === "text" ? p.text : "")).join("");
  const approval = message.approval;
  // A reviewer's answer to the provider's own approval request goes back to the provider.
  if (approval)
    return {
      role: "tool",
      content: [
        {
          type: "tool-approval-response",
          approvalId: approval.approvalId,
          approved: approval.approved,
          ...(approval.reason !== undefined ? { reason: approval.reason } : {}),
          providerExecuted: true,
        },
      ],
    };
  return {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: message.toolCallId,
        toolName: message.name,
        output:
          message.status === "error"
            ? { type: "error-text", value: text }
            : message.status === "ignored"
              ? { type: "execution-denied", reason: text }
              : { type: "text", value: text },
      },
    ],
  };
}

/** Rein messages as AI SDK model messages (consecutive tool results merge into one message). */
export function toModelMessages(messages: readonly Message[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const m of messages) {
    if (m.role === "system")
      out.push({
        role: "system",
        content: typeof m.content === "string" ? m.content : userText(m.content),
      });
    else if (m.role === "user")
      out.push({
        role: "user",
        content: typeof m.content === "string" ? m.content : userParts(m.content),
      });
    else if (m.role === "assistant") out.push({ role: "assistant", content: assistantParts(m) });
    else if (m.role === "tool") {
      const last = out.at(-1);
      const result = toolResult(m);
      if (last?.role === "tool") last.content.push(...result.content);
      else out.push(result);
    }
  }
  return out;
}

function userText(parts: readonly ContentPart[]): string {
  return parts.map((p) => (p.type === "text" ? p.text : "")).join("");
}

/** AI SDK usage as Rein usage (unknown counts are left out). */
export function fromUsage(usage: LanguageModelUsage | undefined): Usage | undefined {
  if (!usage) return undefined;
  const out: Usage = {};
  if (usage.inputTokens !== undefined) out.inputTokens = usage.inputTokens;
  if (usage.outputTokens !== undefined) out.outputTokens = usage.outputTokens;
  if (usage.totalTokens !== undefined) out.totalTokens = usage.totalTokens;
  const reasoning = usage.outputTokenDetails?.reasoningTokens;
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  const cached = usage.inputTokenDetails?.cacheReadTokens;
  if (cached !== undefined) out.cachedInputTokens = cached;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A tool call as the AI SDK reports it. */
interface SdkToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
  providerExecuted?: boolean;
}

/** One part of a generation's `content`, as the AI SDK reports it. */
export type GeneratedPart =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string; providerMetadata?: unknown }
  | ({ type: "tool-call" } & SdkToolCall)
  | {
      type: "tool-result" | "tool-error";
      toolCallId: string;
      toolName: string;
      output?: unknown;
      error?: unknown;
      providerExecuted?: boolean;
    }
  | { type: "tool-approval-request"; approvalId: string; toolCall: SdkToolCall }
  | { type: "file"; file: { base64: string; mediaType: string } }
  | { type: string };

/** A tool call as the AI SDK reports it, as a Rein tool call. */
export function fromToolCall(call: SdkToolCall): ToolCall {
  const args =
    typeof call.input === "object" && call.input !== null && !Array.isArray(call.input)
      ? (call.input as Record<string, unknown>)
      : { input: call.input };
  return {
    id: call.toolCallId,
    name: call.toolName,
    args,
    ...(call.providerExecuted ? { providerExecuted: true } : {}),
  };
}

/**
 * What a part of the provider's own tool handling becomes: an approval request, or the result
 * of a call it ran. Results of calls Rein runs never come back from the model (Rein passes no
 * `execute`), so a `tool-result` here is always the provider's.
 */
export function fromProviderPart(
  part: GeneratedPart,
): { request: ApprovalRequest } | { result: ProviderToolResult } | undefined {
  if (part.type === "tool-approval-request" && "approvalId" in part)
    return { request: { approvalId: part.approvalId, toolCallId: part.toolCall.toolCallId } };
  if ((part.type === "tool-result" || part.type === "tool-error") && "toolCallId" in part)
    return {
      result: {
        toolCallId: part.toolCallId,
        name: part.toolName,
        output: part.type === "tool-error" ? String(part.error) : (part.output ?? null),
        ...(part.type === "tool-error" ? { isError: true } : {}),
      },
    };
  return undefined;
}

/** Adds a provider approval request or result part to `message`; other parts are ignored. */
export function addProviderPart(message: AssistantMessage, part: GeneratedPart): void {
  const provider = fromProviderPart(part);
  if (provider && "request" in provider) (message.approvalRequests ??= []).push(provider.request);
  else if (provider) (message.providerResults ??= []).push(provider.result);
}

/**
 * A finish reason that means the answer is not whole (cut at the token limit, stopped by a
 * content filter, or failed) as the error the run records; undefined for a whole answer.
 */
export function finishError(
  reason: string | undefined,
  responseId: string | undefined,
): ModelResponseError | undefined {
  const cut: Record<string, string> = {
    length: "the answer was cut at the output-token limit",
    "content-filter": "the provider's content filter stopped the answer",
    error: "the provider reported an error",
  };
  const why = reason === undefined ? undefined : cut[reason];
  if (!why) return undefined;
  return new ModelResponseError(
    `The model's answer is not whole: ${why} (finish reason "${reason}").`,
    {
      client: "ai-sdk",
      reason: reason === "error" ? "error" : reason === "length" ? "length" : "content-filter",
      providerCode: reason ?? null,
      responseId: responseId ?? null,
    },
  );
}

/** A generation's content, usage and response metadata as one Rein assistant message. */
export function fromGeneration(
  content: readonly GeneratedPart[],
  usage: LanguageModelUsage | undefined,
  response: { id?: string; modelId?: string } | undefined,
): AssistantMessage {
  const parts: ContentPart[] = [];
  const toolCalls: ToolCall[] = [];
  const message: AssistantMessage = { role: "assistant", content: parts };
  for (const p of content) {
    if (p.type === "text" && "text" in p) parts.push({ type: "text", text: p.text });
    else if (p.type === "reasoning" && "text" in p) {
      const meta = "providerMetadata" in p ? p.providerMetadata : undefined;
      parts.push({
        type: "reasoning",
        text: p.text,
        ...(meta ? { providerOptions: meta as Record<string, Record<string, unknown>> } : {}),
      });
    } else if (p.type === "tool-call" && "toolCallId" in p) toolCalls.push(fromToolCall(p));
    else if (p.type === "file" && "file" in p)
      parts.push({ type: "file", data: p.file.base64, mediaType: p.file.mediaType });
    else addProviderPart(message, p);
  }
  if (parts.length === 1 && parts[0]?.type === "text") message.content = parts[0].text;
  if (parts.length === 0) message.content = "";
  if (toolCalls.length > 0) message.toolCalls = toolCalls;
  const u = fromUsage(usage);
  if (u) message.usage = u;
  if (response?.id) message.id = response.id;
  if (response?.modelId) message.model = response.modelId;
  return message;
}
