/**
 * `fromOpenAI(client, { model, api })`: the OpenAI SDK as a Rein model, over Chat Completions
 * (`api: "chat"`, the default) or the Responses API (`api: "responses"`).
 */
import type { Model } from "@rein/core";
import type OpenAI from "openai";
import { chatDeltas, fromChatCompletion, toChatMessages, toChatTools } from "./chat.ts";
import { fromResponse, responseDeltas, toResponseInput, toResponseTools } from "./responses.ts";

/** Options of {@link fromOpenAI}. */
export interface OpenAIModelOptions {
  /** Model name, e.g. `"gpt-4o"`. */
  model: string;
  /** Which API to call. Default `"chat"`. */
  api?: "chat" | "responses";
  /** Stream tokens so the `messages` stream mode sees them. Default false. */
  stream?: boolean;
  /**
   * Extra request fields (temperature, reasoning, ...), sent with every call. Its `tools` (a
   * hosted MCP server `{ type: "mcp", server_label, server_url }`, web search...) are sent
   * beside the agent's own tools, not replaced by them.
   */
  body?: Record<string, unknown>;
}

/** The request's tools: the body's own (hosted tools the provider runs), then the agent's. */
function withBodyTools(body: Record<string, unknown>, own: readonly unknown[]): unknown[] {
  const given = Array.isArray(body["tools"]) ? (body["tools"] as unknown[]) : [];
  return [...given, ...own];
}

/**
 * Wraps an OpenAI client as a Rein {@link Model}. Works with any server that speaks the same
 * API (Azure OpenAI, vLLM, Ollama's OpenAI endpoint) through the client's `baseURL`.
 *
 * @example
 * const graph = agent({ model: fromOpenAI(new OpenAI(), { model: "gpt-4o" }), tools, approve });
 */
export function fromOpenAI(client: OpenAI, options: OpenAIModelOptions): Model {
  const { model, body = {} } = options;
  if (options.api === "responses")
    return async (messages, { tools, signal }) => {
      const request = {
        ...body,
        model,
        input: toResponseInput(messages),
        ...(tools.length > 0
          ? { tools: withBodyTools(body, toResponseTools(tools)) as never }
          : {}),
      };
      if (!options.stream)
        return fromResponse(
          await client.responses.create({ ...request, stream: false }, { signal }),
        );
      return responseDeltas(
        await client.responses.create({ ...request, stream: true }, { signal }),
      );
    };
  return async (messages, { tools, signal }) => {
    const request = {
      ...body,
      model,
      messages: toChatMessages(messages),
      ...(tools.length > 0 ? { tools: withBodyTools(body, toChatTools(tools)) as never } : {}),
    };
    if (!options.stream)
      return fromChatCompletion(
        await client.chat.completions.create({ ...request, stream: false }, { signal }),
      );
    return chatDeltas(
      await client.chat.completions.create(
        { ...request, stream: true, stream_options: { include_usage: true } },
        { signal },
      ),
    );
  };
}
