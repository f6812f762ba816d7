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
    return deltas(await runnable.stream(input, { signal }));
  };
}

async function* deltas(chunks: AsyncIterable<AIMessageChunk>): AsyncGenerator<ModelDelta> {
  let full: AIMessageChunk | undefined;
  for await (const chunk of midStream(chunks)) {
    full = full ? full.concat(chunk) : chunk;
    const text = fromContent(chunk.content);
    if (typeof text === "string") {
      if (text !== "") yield { type: "text", text };
    } else
      for (const part of text)
        if (part.type === "text" || part.type === "reasoning")
          yield { type: part.type, text: part.text };
  }
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
    throw new ModelResponseError(
      `The model's stream failed: ${error instanceof Error ? error.message : String(error)}`,
      {
        client: "langchain",
        reason: "error",
        providerCode: error instanceof Error ? error.name : null,
      },
    );
  }
}
