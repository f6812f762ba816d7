/**
 * `fromAiSdk(model)`: any AI SDK language model (OpenAI, Anthropic, Google, a mock...) as a Rein
 * model. Tools are passed without `execute`, so the SDK returns the calls and Rein runs them
 * (with approvals); one model call is one SDK step.
 */
import type { Model, ModelDelta, ToolSpec } from "@rein/core";
import { generateText, jsonSchema, streamText, tool, type LanguageModel, type ToolSet } from "ai";
import { fromGeneration, fromToolCall, fromUsage, toModelMessages } from "./convert.ts";

/** Options of {@link fromAiSdk}. */
export interface AiSdkModelOptions {
  /** Stream tokens (`streamText`) so the `messages` stream mode sees them. Default false. */
  stream?: boolean;
  /** Passed to every call (temperature, maxOutputTokens, providerOptions...). */
  settings?: Omit<
    Parameters<typeof generateText>[0],
    "model" | "messages" | "prompt" | "tools" | "system" | "abortSignal"
  >;
}

function toolSet(specs: readonly ToolSpec[]): ToolSet {
  return Object.fromEntries(
    specs.map((s) => [
      s.name,
      tool({ description: s.description, inputSchema: jsonSchema(s.parameters as never) }),
    ]),
  );
}

/**
 * Wraps an AI SDK language model as a Rein {@link Model}.
 *
 * @example
 * import { openai } from "@ai-sdk/openai";
 * const graph = agent({ model: fromAiSdk(openai("gpt-4o")), tools, approve: ["issue_refund"] });
 */
export function fromAiSdk(model: LanguageModel, options: AiSdkModelOptions = {}): Model {
  return (messages, { tools, signal }) => {
    const call = {
      ...options.settings,
      model,
      messages: toModelMessages(messages),
      ...(tools.length > 0 ? { tools: toolSet(tools) } : {}),
      abortSignal: signal,
    };
    if (!options.stream)
      return generateText(call).then((r) =>
        fromGeneration(r.content, r.usage, { id: r.response.id, modelId: r.response.modelId }),
      );
    return deltas(streamText(call).fullStream);
  };
}

async function* deltas(
  parts: AsyncIterable<{ type: string } & Record<string, unknown>>,
): AsyncGenerator<ModelDelta> {
  for await (const part of parts) {
    switch (part.type) {
      case "text-delta":
        yield { type: "text", text: part.text as string };
        break;
      case "reasoning-delta":
        yield { type: "reasoning", text: part.text as string };
        break;
      case "tool-call":
        yield {
          type: "tool-call",
          call: fromToolCall(part as unknown as Parameters<typeof fromToolCall>[0]),
        };
        break;
      case "finish-step": {
        const response = part.response as { id?: string; modelId?: string };
        if (response.id)
          yield {
            type: "id",
            id: response.id,
            ...(response.modelId ? { model: response.modelId } : {}),
          };
        break;
      }
      case "finish": {
        const usage = fromUsage(part.totalUsage as Parameters<typeof fromUsage>[0]);
        if (usage) yield { type: "usage", usage };
        break;
      }
      case "error":
        throw part.error instanceof Error ? part.error : new Error(JSON.stringify(part.error));
    }
  }
}
