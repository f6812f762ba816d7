/**
 * The Chat Completions API: Rein messages as `messages`, a completion (or its chunks) back as
 * a Rein assistant message.
 */
import type { AssistantMessage, Message, ModelDelta, ToolSpec, Usage } from "@rein/core";
import type OpenAI from "openai";
import {
  chatFinishError,
  joinText,
  mediaUrl,
  midStream,
  toolCallFrom,
  truncatedStream,
} from "./shared.ts";

type Params = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type UserPart = OpenAI.Chat.Completions.ChatCompletionContentPart;

/** Rein messages as Chat Completions messages. */
export function toChatMessages(messages: readonly Message[]): Params[] {
  return messages.map((m): Params => {
    if (m.role === "assistant") {
      const calls = m.toolCalls ?? [];
      return {
        role: "assistant",
        content: joinText(m.content) || null,
        ...(calls.length > 0
          ? {
              tool_calls: calls.map((c) => ({
                id: c.id,
                type: "function" as const,
                function: { name: c.name, arguments: JSON.stringify(c.args) },
              })),
            }
          : {}),
      };
    }
    if (m.role === "tool")
      return { role: "tool", tool_call_id: m.toolCallId, content: joinText(m.content) };
    if (m.role === "system") return { role: "system", content: joinText(m.content) };
    if (typeof m.content === "string") return { role: "user", content: m.content };
    const parts: UserPart[] = [];
    for (const p of m.content) {
      if (p.type === "text") parts.push({ type: "text", text: p.text });
      else if (p.type === "image")
        parts.push({ type: "image_url", image_url: { url: mediaUrl(p) } });
      else if (p.type === "file")
        parts.push({
          type: "file",
          file: { file_data: mediaUrl(p), ...(p.filename ? { filename: p.filename } : {}) },
        });
    }
    return { role: "user", content: parts };
  });
}

/** Tools as Chat Completions function tools. */
export function toChatTools(
  tools: readonly ToolSpec[],
): OpenAI.Chat.Completions.ChatCompletionTool[] {
  return tools.map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}

/** Chat Completions usage as Rein usage. */
export function fromChatUsage(
  u: OpenAI.Completions.CompletionUsage | null | undefined,
): Usage | undefined {
  if (!u) return undefined;
  const out: Usage = {
    inputTokens: u.prompt_tokens,
    outputTokens: u.completion_tokens,
    totalTokens: u.total_tokens,
  };
  const reasoning = u.completion_tokens_details?.reasoning_tokens;
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  const cached = u.prompt_tokens_details?.cached_tokens;
  if (cached !== undefined) out.cachedInputTokens = cached;
  return out;
}

/** A completion's first choice as a Rein assistant message. */
export function fromChatCompletion(c: OpenAI.Chat.Completions.ChatCompletion): AssistantMessage {
  const cut = chatFinishError(c.choices[0]?.finish_reason, c.id);
  if (cut) throw cut;
  const choice = c.choices[0]?.message;
  const out: AssistantMessage = {
    role: "assistant",
    content: choice?.content ?? "",
    id: c.id,
    model: c.model,
  };
  const calls = (choice?.tool_calls ?? []).flatMap((t) =>
    t.type === "function" ? [toolCallFrom(t.id, t.function.name, t.function.arguments)] : [],
  );
  if (calls.length > 0) out.toolCalls = calls;
  const usage = fromChatUsage(c.usage);
  if (usage) out.usage = usage;
  return out;
}

/** Streamed chunks as deltas; tool-call arguments are gathered by index and sent whole. */
export async function* chatDeltas(
  chunks: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>,
): AsyncGenerator<ModelDelta> {
  const calls = new Map<number, { id: string; name: string; args: string }>();
  let id: { id: string; model: string } | undefined;
  let usage: Usage | undefined;
  let finish: string | null | undefined;
  for await (const chunk of midStream("chat", chunks)) {
    id ??= { id: chunk.id, model: chunk.model };
    usage = fromChatUsage(chunk.usage) ?? usage;
    finish = chunk.choices[0]?.finish_reason ?? finish;
    const delta = chunk.choices[0]?.delta;
    if (!delta) continue;
    if (delta.content) yield { type: "text", text: delta.content };
    for (const t of delta.tool_calls ?? []) {
      const call = calls.get(t.index) ?? { id: "", name: "", args: "" };
      if (t.id) call.id = t.id;
      if (t.function?.name) call.name += t.function.name;
      if (t.function?.arguments) call.args += t.function.arguments;
      calls.set(t.index, call);
    }
  }
  // No finish reason: the stream ended early, and what arrived is not the whole answer.
  if (!finish) throw truncatedStream("chat", id?.id);
  // A cut answer's tool-call arguments are incomplete JSON: fail before yielding any call.
  const cut = chatFinishError(finish, id?.id);
  if (cut) throw cut;
  for (const c of [...calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c))
    yield { type: "tool-call", call: toolCallFrom(c.id, c.name, c.args) };
  if (usage) yield { type: "usage", usage };
  if (id) yield { type: "id", id: id.id, model: id.model };
}
