/**
 * `fromAiSdk(model)`: any AI SDK language model (OpenAI, Anthropic, Google, a mock...) as a Rein
 * model. Tools are passed without `execute`, so the SDK returns the calls and Rein runs them
 * (with approvals); one model call is one SDK step.
 */
import { ModelResponseError, type Model, type ModelDelta, type ToolSpec } from "@rein/core";
import { generateText, jsonSchema, streamText, tool, type LanguageModel, type ToolSet } from "ai";
import {
  finishError,
  fromGeneration,
  fromProviderPart,
  fromToolCall,
  fromUsage,
  toModelMessages,
} from "./convert.ts";

/** Options of {@link fromAiSdk}. */
export interface AiSdkModelOptions {
  /** Stream tokens (`streamText`) so the `messages` stream mode sees them. Default false. */
  stream?: boolean;
  /** Passed to every call (temperature, maxOutputTokens, providerOptions...). */
  settings?: Omit<
    Parameters<typeof generateText>[0],
    "model" | "messages" | "prompt" | "tools" | "system" | "abortSignal"
  >;
  /**
   * Tools the provider runs itself (web search, a hosted MCP server...), sent with every call
   * beside the agent's tools. Their calls are never run by Rein; when the provider asks for
   * approval (a `tool-approval-request` part), the call pauses as a Rein interrupt and the answer
   * goes back to the provider as a `tool-approval-response`.
   */
  providerTools?: ToolSet;
}

function toolSet(specs: readonly ToolSpec[], provider: ToolSet | undefined): ToolSet {
  return {
    ...provider,
    ...Object.fromEntries(
      specs.map((s) => [
        s.name,
        tool({ description: s.description, inputSchema: jsonSchema(s.parameters as never) }),
      ]),
    ),
  };
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
    const provider = options.providerTools;
    const call = {
      ...options.settings,
      model,
      messages: toModelMessages(messages),
      ...(tools.length > 0 || provider ? { tools: toolSet(tools, provider) } : {}),
      abortSignal: signal,
    };
    if (!options.stream)
      return generateText(call).then((r) => {
        const cut = finishError(r.finishReason, r.response.id);
        if (cut) throw cut;
        return fromGeneration(r.content, r.usage, {
          id: r.response.id,
          modelId: r.response.modelId,
        });
      });
    // The stream's error part carries a failure to the run, which records it: no console log.
    return deltas(streamText({ ...call, onError: () => {} }).fullStream);
  };
}

/** True for an abort of the run's signal, which passes as it is. */
function isAbort(error: unknown): boolean {
  return error instanceof Error && error.name === "AbortError";
}

/**
 * A connection that went away mid-body (undici's `TypeError: terminated`, a reset socket): the
 * answer is not whole, and a new call may get past it.
 */
function isDropped(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown; cause?: { code?: unknown } }).cause?.code;
  return (
    (error instanceof TypeError && /terminated|network|fetch failed/i.test(error.message)) ||
    (typeof code === "string" && /^(ECONNRESET|UND_ERR_SOCKET|EPIPE)$/.test(code))
  );
}

function dropped(error: Error): ModelResponseError {
  return new ModelResponseError(
    `The model's stream failed: the connection dropped (${error.message}).`,
    {
      client: "ai-sdk",
      reason: "dropped",
      providerCode: null,
      retryable: true,
    },
  );
}

/**
 * A stream's `error` part as the error the run records, keeping what the provider said: its
 * error code or type, the HTTP status, whether the SDK thinks a retry may succeed, a retry hint.
 */
function streamError(error: unknown): Error {
  if (isAbort(error) || error instanceof ModelResponseError) return error as Error;
  if (isDropped(error)) return dropped(error as Error);
  const text = error instanceof Error ? error.message : JSON.stringify(error);
  const e = (error ?? {}) as {
    code?: unknown;
    type?: unknown;
    statusCode?: unknown;
    isRetryable?: unknown;
    responseHeaders?: Record<string, string>;
    data?: { error?: { code?: unknown; type?: unknown } };
  };
  const codeOf = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
  const providerCode =
    codeOf(e.data?.error?.code) ??
    codeOf(e.code) ??
    codeOf(e.data?.error?.type) ??
    codeOf(e.type) ??
    (error instanceof Error ? error.name : null);
  const provider: Record<string, unknown> = {};
  if (typeof e.statusCode === "number") provider["status"] = e.statusCode;
  const retryAfter = e.responseHeaders?.["retry-after"];
  if (retryAfter !== undefined) provider["retryAfter"] = retryAfter;
  return new ModelResponseError(`The model's stream failed: ${text}`, {
    client: "ai-sdk",
    reason: "error",
    providerCode,
    ...(typeof e.isRetryable === "boolean" ? { retryable: e.isRetryable } : {}),
    provider,
  });
}

/**
 * Reads the SDK's parts; a read that throws (the body broke before the SDK turned it into an
 * `error` part) is the run's typed error as well.
 */
async function* guarded<T>(parts: AsyncIterable<T>): AsyncGenerator<T> {
  try {
    for await (const part of parts) yield part;
  } catch (error) {
    throw streamError(error);
  }
}

async function* deltas(
  parts: AsyncIterable<{ type: string } & Record<string, unknown>>,
): AsyncGenerator<ModelDelta> {
  for await (const part of guarded(parts)) {
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
      case "tool-approval-request":
      case "tool-result":
      case "tool-error": {
        const provider = fromProviderPart(part);
        if (provider && "request" in provider)
          yield { type: "approval-request", request: provider.request };
        else if (provider) yield { type: "provider-result", result: provider.result };
        break;
      }
      case "finish-step": {
        const response = part.response as { id?: string; modelId?: string };
        // The SDK reports a step whose provider stream ended without its `finish` part as
        // finish reason "other" with no raw reason: the answer is not whole.
        if (part.finishReason === "other" && part.rawFinishReason === undefined)
          throw new ModelResponseError(
            "The model's stream ended before its terminal event; the answer is not whole.",
            {
              client: "ai-sdk",
              reason: "truncated",
              providerCode: null,
              responseId: response.id ?? null,
              retryable: true,
            },
          );
        const cut = finishError(part.finishReason as string, response.id);
        if (cut) throw cut;
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
        throw streamError(part.error);
    }
  }
}
