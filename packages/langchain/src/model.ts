/**
 * `fromLangChain(chatModel)`: a LangChain.js chat model (`BaseChatModel` with `bindTools`) as a
 * Rein model. Tools are bound as `{ name, description, schema }` with a JSON Schema, which every
 * LangChain provider accepts; Rein runs the calls the model returns.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { AIMessageChunk } from "@langchain/core/messages";
import {
  InvalidInputError,
  ModelResponseError,
  type Model,
  type ModelDelta,
  type ToolSpec,
} from "@rein/core";
import { fromAIMessage, fromContent, toLangChainMessages } from "./convert.ts";

/** Options of {@link fromLangChain}. */
export interface LangChainModelOptions {
  /** Stream tokens (`model.stream`) so the `messages` stream mode sees them. Default false. */
  stream?: boolean;
  /**
   * Whether a streamed chunk is the provider's last one. A stream that ends without it was cut
   * off, and the run fails with a retryable `model_failed` instead of keeping a partial answer.
   * Default {@link isLastChunk}: a finish or stop reason in the chunk's response metadata, as
   * LangChain's OpenAI, Anthropic, Google, Bedrock and Ollama classes send.
   */
  isLast?: (chunk: AIMessageChunk) => boolean;
}

/** The response-metadata keys by which LangChain's provider classes mark their last chunk. */
const LAST_CHUNK_KEYS = [
  "finish_reason",
  "stop_reason",
  "finishReason",
  "done_reason",
  "stopReason",
];

/**
 * True for a provider's last chunk of a stream: one whose response metadata carries a finish or
 * stop reason, or that LangChain marks `chunk_position: "last"`.
 */
export function isLastChunk(chunk: AIMessageChunk): boolean {
  const meta = (chunk.response_metadata ?? {}) as Record<string, unknown>;
  if ((chunk as { chunk_position?: unknown }).chunk_position === "last") return true;
  return LAST_CHUNK_KEYS.some((k) => meta[k] !== undefined && meta[k] !== null);
}

function bind(model: BaseChatModel, tools: readonly ToolSpec[]) {
  if (tools.length === 0) return model;
  if (!model.bindTools)
    throw new InvalidInputError(
      `The chat model ${model.getName()} cannot bind tools; use a model with bindTools (tool calling).`,
    );
  return model.bindTools(
    tools.map((t) => ({ name: t.name, description: t.description, schema: t.parameters })),
  );
}

/**
 * Wraps a LangChain chat model as a Rein {@link Model}.
 *
 * @example
 * import { ChatOpenAI } from "@langchain/openai";
 * const graph = agent({ model: fromLangChain(new ChatOpenAI({ model: "gpt-4o" })), tools, approve });
 */
export function fromLangChain(model: BaseChatModel, options: LangChainModelOptions = {}): Model {
  return async (messages, { tools, signal }) => {
    const runnable = bind(model, tools);
    const input = toLangChainMessages(messages);
    if (!options.stream) return fromAIMessage(await runnable.invoke(input, { signal }));
    return deltas(await runnable.stream(input, { signal }), options.isLast ?? isLastChunk);
  };
}

async function* deltas(
  chunks: AsyncIterable<AIMessageChunk>,
  isLast: (chunk: AIMessageChunk) => boolean,
): AsyncGenerator<ModelDelta> {
  let full: AIMessageChunk | undefined;
  let ended = false;
  for await (const chunk of midStream(chunks)) {
    full = full ? full.concat(chunk) : chunk;
    ended ||= isLast(chunk);
    const text = fromContent(chunk.content);
    if (typeof text === "string") {
      if (text !== "") yield { type: "text", text };
    } else
      for (const part of text)
        if (part.type === "text" || part.type === "reasoning")
          yield { type: part.type, text: part.text };
  }
  if (!ended)
    throw new ModelResponseError(
      "The model's stream ended before its last chunk (no finish reason); the answer is not whole.",
      {
        client: "langchain",
        reason: "truncated",
        providerCode: null,
        responseId: full?.id ?? null,
        retryable: true,
      },
    );
  if (!full) return;
  // Tool-call arguments arrive in pieces; the concatenated message has them whole.
  const message = fromAIMessage(full);
  for (const call of message.toolCalls ?? []) yield { type: "tool-call", call };
  if (message.usage) yield { type: "usage", usage: message.usage };
  if (message.id !== undefined)
    yield { type: "id", id: message.id, ...(message.model ? { model: message.model } : {}) };
}

/**
 * Iterates a chat model's stream, turning a failure after the stream started (the provider's
 * error event, which the model class throws as it reads) into the run's typed error. An abort
 * passes as it is.
 */
async function* midStream<T>(chunks: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    for await (const chunk of chunks) yield chunk;
  } catch (error) {
    if (error instanceof Error && /abort/i.test(error.name + error.message)) throw error;
    if (error instanceof ModelResponseError) throw error;
    const text = error instanceof Error ? error.message : String(error);
    // A connection that went away mid-body (undici's `TypeError: terminated`): a new call may
    // get past it.
    if (error instanceof TypeError && /terminated|network|fetch failed/i.test(text))
      throw new ModelResponseError(`The model's stream failed: the connection dropped (${text}).`, {
        client: "langchain",
        reason: "dropped",
        providerCode: null,
        retryable: true,
      });
    const e = (error ?? {}) as { code?: unknown; status?: unknown; lc_error_code?: unknown };
    throw new ModelResponseError(`The model's stream failed: ${text}`, {
      client: "langchain",
      reason: "error",
      providerCode:
        typeof e.code === "string" ? e.code : error instanceof Error ? error.name : null,
      provider: {
        ...(typeof e.status === "number" ? { status: e.status } : {}),
        ...(typeof e.lc_error_code === "string" ? { lcErrorCode: e.lc_error_code } : {}),
      },
    });
  }
}
