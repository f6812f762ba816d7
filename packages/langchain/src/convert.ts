/**
 * Lossless conversion between Rein messages and LangChain messages (standard v1 content blocks).
 */
import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage as LcToolMessage,
  type AIMessageChunk,
  type BaseMessage,
  type UsageMetadata,
} from "@langchain/core/messages";
import {
  isDeclined,
  ModelResponseError,
  type AssistantMessage,
  type ContentPart,
  type Message,
  type ToolCall,
  type Usage,
} from "@rein/core";

/** A LangChain content block, as far as this adapter reads or writes it. */
type Block = Record<string, unknown> & { type: string };

function toBlocks(parts: readonly ContentPart[]): Block[] {
  return parts.map((p): Block => {
    switch (p.type) {
      case "text":
        return { type: "text", text: p.text };
      case "reasoning":
        return {
          type: "reasoning",
          reasoning: p.text,
          ...(p.signature !== undefined ? { signature: p.signature } : {}),
        };
      case "image":
      case "file":
        return {
          type: p.type,
          ...(p.url !== undefined ? { url: p.url } : {}),
          ...(p.data !== undefined ? { data: p.data } : {}),
          ...(p.mediaType !== undefined ? { mimeType: p.mediaType } : {}),
          ...(p.type === "file" && p.filename !== undefined
            ? { metadata: { filename: p.filename } }
            : {}),
        };
    }
  });
}

function content(value: string | readonly ContentPart[]): string | Block[] {
  return typeof value === "string" ? value : toBlocks(value);
}

/** Rein messages as LangChain messages. */
export function toLangChainMessages(messages: readonly Message[]): BaseMessage[] {
  return messages.map((m) => {
    if (m.role === "assistant")
      return new AIMessage({
        content: content(m.content) as never,
        tool_calls: (m.toolCalls ?? []).map((c) => ({
          id: c.id,
          name: c.name,
          args: c.args,
          type: "tool_call" as const,
        })),
        ...(m.id !== undefined ? { id: m.id } : {}),
        ...(m.usage ? { usage_metadata: toUsageMetadata(m.usage) } : {}),
      });
    if (m.role === "tool")
      return new LcToolMessage({
        content: content(m.content),
        tool_call_id: m.toolCallId,
        name: m.name,
        // A declined call (rejected, or answered in the tool's place) is not a success: the
        // model reads the status, and the text says why.
        status: m.status === "error" || isDeclined(m) ? "error" : "success",
      });
    if (m.role === "system") return new SystemMessage({ content: content(m.content) as never });
    return new HumanMessage({ content: content(m.content) as never });
  });
}

function toUsageMetadata(u: Usage): UsageMetadata {
  return {
    input_tokens: u.inputTokens ?? 0,
    output_tokens: u.outputTokens ?? 0,
    total_tokens: u.totalTokens ?? (u.inputTokens ?? 0) + (u.outputTokens ?? 0),
  };
}

/** LangChain usage metadata as Rein usage. */
export function fromUsageMetadata(u: UsageMetadata | undefined): Usage | undefined {
  if (!u) return undefined;
  const out: Usage = {
    inputTokens: u.input_tokens,
    outputTokens: u.output_tokens,
    totalTokens: u.total_tokens,
  };
  if (u.output_token_details?.reasoning !== undefined)
    out.reasoningTokens = u.output_token_details.reasoning;
  if (u.input_token_details?.cache_read !== undefined)
    out.cachedInputTokens = u.input_token_details.cache_read;
  return out;
}

/** The text and reasoning parts of a LangChain message's content. */
export function fromContent(value: AIMessage["content"]): string | ContentPart[] {
  if (typeof value === "string") return value;
  const parts: ContentPart[] = [];
  for (const raw of value as unknown as Block[]) {
    if (raw.type === "text" && typeof raw.text === "string")
      parts.push({ type: "text", text: raw.text });
    else if (raw.type === "reasoning" && typeof raw.reasoning === "string")
      parts.push({
        type: "reasoning",
        text: raw.reasoning,
        ...(typeof raw.signature === "string" ? { signature: raw.signature } : {}),
      });
    else if (raw.type === "thinking" && typeof raw.thinking === "string")
      parts.push({
        type: "reasoning",
        text: raw.thinking,
        ...(typeof raw.signature === "string" ? { signature: raw.signature } : {}),
      });
  }
  return parts.length === 1 && parts[0]?.type === "text" ? parts[0].text : parts;
}

/** Stop reasons (OpenAI's `finish_reason`, Anthropic's `stop_reason`...) of a cut answer. */
const cutReasons = new Set(["length", "content_filter", "max_tokens", "MAX_TOKENS", "SAFETY"]);

/**
 * The error of an answer the provider cut short, from the stop reason LangChain puts in
 * `response_metadata`; undefined for a whole answer.
 */
export function cutError(message: AIMessage | AIMessageChunk): ModelResponseError | undefined {
  const meta = (message.response_metadata ?? {}) as Record<string, unknown>;
  const reason = [meta.finish_reason, meta.stop_reason, meta.finishReason].find(
    (r): r is string => typeof r === "string",
  );
  if (reason === undefined || !cutReasons.has(reason)) return undefined;
  return new ModelResponseError(
    `The model's answer is not whole: the provider stopped it (${reason}).`,
    {
      client: "langchain",
      reason: /filter|safety/i.test(reason) ? "content-filter" : "length",
      providerCode: reason,
      responseId: message.id ?? null,
    },
  );
}

/** A LangChain AI message (or the concatenation of a stream's chunks) as a Rein message. */
export function fromAIMessage(message: AIMessage | AIMessageChunk): AssistantMessage {
  const cut = cutError(message);
  if (cut) throw cut;
  const out: AssistantMessage = { role: "assistant", content: fromContent(message.content) };
  const calls: ToolCall[] = (message.tool_calls ?? []).map((c, i) => ({
    id: c.id ?? `call_${i}`,
    name: c.name,
    args: c.args as Record<string, unknown>,
  }));
  if (calls.length > 0) out.toolCalls = calls;
  if (message.id !== undefined) out.id = message.id;
  const usage = fromUsageMetadata(message.usage_metadata);
  if (usage) out.usage = usage;
  const model = (message.response_metadata as { model_name?: unknown } | undefined)?.model_name;
  if (typeof model === "string") out.model = model;
  return out;
}
