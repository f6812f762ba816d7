/**
 * Lossless conversion between Rein messages and the AI SDK's `ModelMessage`s, and from a
 * generation's content back to a Rein assistant message.
 */
import type {
  AssistantMessage,
  ContentPart,
  Message,
  ToolCall,
  ToolMessage,
  Usage,
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
    out.push({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: call.args });
  return out;
}

function toolResult(message: ToolMessage): ToolModelMessage {
  const text =
    typeof message.content === "string"
      ? message.content
      : message.content.map((p) => (p.type === "text" ? p.text : "")).join("");
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

/** One part of a generation's `content`, as the AI SDK reports it. */
export type GeneratedPart =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string; providerMetadata?: unknown }
  | { type: "tool-call"; toolCallId: string; toolName: string; input: unknown }
  | { type: "file"; file: { base64: string; mediaType: string } }
  | { type: string };

/** A tool call as the AI SDK reports it, as a Rein tool call. */
export function fromToolCall(call: {
  toolCallId: string;
  toolName: string;
  input: unknown;
}): ToolCall {
  const args =
    typeof call.input === "object" && call.input !== null && !Array.isArray(call.input)
      ? (call.input as Record<string, unknown>)
      : { input: call.input };
  return { id: call.toolCallId, name: call.toolName, args };
}

/** A generation's content, usage and response metadata as one Rein assistant message. */
export function fromGeneration(
  content: readonly GeneratedPart[],
  usage: LanguageModelUsage | undefined,
  response: { id?: string; modelId?: string } | undefined,
): AssistantMessage {
  const parts: ContentPart[] = [];
  const toolCalls: ToolCall[] = [];
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
  }
  const message: AssistantMessage = {
    role: "assistant",
    content: parts.length === 1 && parts[0]?.type === "text" ? parts[0].text : parts,
  };
  if (parts.length === 0) message.content = "";
  if (toolCalls.length > 0) message.toolCalls = toolCalls;
  const u = fromUsage(usage);
  if (u) message.usage = u;
  if (response?.id) message.id = response.id;
  if (response?.modelId) message.model = response.modelId;
  return message;
}
