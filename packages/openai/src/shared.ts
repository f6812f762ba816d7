/**
 * Helpers both OpenAI APIs share: media parts as data URLs, JSON arguments, tool results as text.
 */
import {
  InvalidInputError,
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
