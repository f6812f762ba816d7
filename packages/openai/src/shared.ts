/**
 * Helpers both OpenAI APIs share: media parts as data URLs, JSON arguments, tool results as text.
 */
import {
  InvalidInputError,
  ModelResponseError,
  type ContentPart,
  type ImagePart,
  type FilePart,
  type ToolCall,
} from "@rein/core";

/** A media part as a URL the API accepts (`https:` as is, base64 data as a `data:` URL). */
export function mediaUrl(part: ImagePart | FilePart): string {
  if (part.url !== undefined) return part.url;
  return `data:${part.mediaType ?? "application/octet-stream"};base64,${part.data ?? ""}`;
}

/** The text parts of content, joined. */
export function joinText(content: string | readonly ContentPart[]): string {
  if (typeof content === "string") return content;
  return content.map((p) => (p.type === "text" ? p.text : "")).join("");
}

/**
 * A tool call from the API's JSON-encoded arguments.
 *
 * @throws InvalidInputError when the model sent arguments that are not a JSON object.
 */
export function toolCallFrom(id: string, name: string, json: string): ToolCall {
  let args: unknown;
  try {
    args = json.trim() === "" ? {} : JSON.parse(json);
  } catch {
    throw new InvalidInputError(`The model sent malformed JSON arguments for ${name}: ${json}`, {
      toolCallId: id,
    });
  }
  if (typeof args !== "object" || args === null || Array.isArray(args))
    throw new InvalidInputError(`The model sent arguments for ${name} that are not an object.`, {
      toolCallId: id,
    });
  return { id, name, args: args as Record<string, unknown> };
}

/** A failed or cut answer of either API as the error the run records. */
export function modelFailure(
  api: "chat" | "responses",
  reason: string,
  why: string,
  providerCode: string | null | undefined,
  responseId: string | null | undefined,
  more: { retryable?: boolean; provider?: Record<string, unknown> } = {},
): ModelResponseError {
  return new ModelResponseError(`The model's answer is not whole (OpenAI ${api}): ${why}.`, {
    client: "openai",
    reason,
    providerCode: providerCode ?? null,
    responseId: responseId ?? null,
    ...more,
  });
}

/**
 * The error of a stream that ended cleanly before its terminal event (no finish reason or
 * `[DONE]`, no `response.completed`): what arrived is not the whole answer, and asking again
 * may give it.
 */
export function truncatedStream(
  api: "chat" | "responses",
  responseId: string | null | undefined,
): ModelResponseError {
  return modelFailure(
    api,
    "truncated",
    "the stream ended before its terminal event",
    null,
    responseId,
    { retryable: true },
  );
}

/** Finish reasons of Chat Completions that mean the answer was cut short. */
const cutReasons: Record<string, string> = {
  length: "the answer was cut at the output-token limit",
  content_filter: "the content filter stopped the answer",
};

/** The error of a chat completion that stopped for `finish`, or undefined for a whole answer. */
export function chatFinishError(
  finish: string | null | undefined,
  responseId: string | undefined,
): ModelResponseError | undefined {
  const why = finish ? cutReasons[finish] : undefined;
  if (!finish || !why) return undefined;
  return modelFailure(
    "chat",
    finish === "length" ? "length" : "content-filter",
    why,
    finish,
    responseId,
  );
}

/**
 * Iterates a client stream, turning a failure in the middle of it (the provider sent an error
 * after the response had started, which the SDK throws as it reads) into the run's typed error.
 * An abort passes as it is.
 */
export async function* midStream<T>(
  api: "chat" | "responses",
  items: AsyncIterable<T>,
): AsyncGenerator<T> {
  try {
    for await (const item of items) yield item;
  } catch (error) {
    if (error instanceof Error && /abort/i.test(error.name)) throw error;
    if (error instanceof ModelResponseError) throw error;
    throw streamFailure(api, error);
  }
}

/**
 * A failure thrown while reading a stream: the provider's error event (the SDK's `APIError`,
 * with the provider's code, type and status kept) or a connection that went away mid-body
 * (undici's `TypeError: terminated`, a reset socket), which a new call may get past.
 */
function streamFailure(api: "chat" | "responses", error: unknown): ModelResponseError {
  const text = error instanceof Error ? error.message : String(error);
  const e = (error ?? {}) as { code?: unknown; type?: unknown; status?: unknown; param?: unknown };
  const code = typeof e.code === "string" ? e.code : typeof e.type === "string" ? e.type : null;
  const fromProvider = code !== null || typeof e.status === "number";
  if (!fromProvider)
    return modelFailure(api, "dropped", `the connection dropped: ${text}`, null, null, {
      retryable: true,
    });
  const provider: Record<string, unknown> = {};
  if (typeof e.type === "string") provider["type"] = e.type;
  if (typeof e.status === "number") provider["status"] = e.status;
  if (typeof e.param === "string") provider["param"] = e.param;
  return modelFailure(api, "error", `the stream failed: ${text}`, code, null, {
    retryable: code === "rate_limit_exceeded" || code === "server_error",
    provider,
  });
}
