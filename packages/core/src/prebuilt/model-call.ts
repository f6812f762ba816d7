/**
 * Calling a {@link Model}: a returned message is taken as is; a stream of deltas is forwarded
 * (for the `messages` stream mode) and assembled into one assistant message.
 */
import { InvalidInputError } from "../errors.ts";
import type {
  AssistantMessage,
  ContentPart,
  Message,
  Model,
  ModelCallOptions,
  ModelDelta,
  ModelOutput,
} from "./messages.ts";

function isStream(output: ModelOutput): output is AsyncIterable<ModelDelta> {
  return typeof (output as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === "function";
}

/**
 * Calls `model` and returns its assistant message. Deltas of a streaming model go to `onDelta`
 * as they arrive.
 *
 * @throws InvalidInputError when the model returns something other than an assistant message.
 */
export async function callModel(
  model: Model,
  messages: readonly Message[],
  options: ModelCallOptions,
  onDelta?: (delta: ModelDelta) => void,
): Promise<AssistantMessage> {
  const output = await model(messages, options);
  if (isStream(output)) return assemble(output, onDelta);
  if (typeof output !== "object" || output === null || output.role !== "assistant")
    throw new InvalidInputError(
      'A model must return an assistant message ({ role: "assistant", content }) or an async iterable of deltas.',
      { got: output === null ? "null" : typeof output === "object" ? output.role : typeof output },
    );
  return output;
}

/** Folds a delta stream into one assistant message (adjacent text/reasoning deltas merge). */
export async function assemble(
  stream: AsyncIterable<ModelDelta>,
  onDelta?: (delta: ModelDelta) => void,
): Promise<AssistantMessage> {
  const parts: ContentPart[] = [];
  const message: AssistantMessage = { role: "assistant", content: parts };
  for await (const delta of stream) {
    onDelta?.(delta);
    switch (delta.type) {
      case "text":
      case "reasoning": {
        const last = parts.at(-1);
        if (last?.type === delta.type) last.text += delta.text;
        else parts.push({ type: delta.type, text: delta.text });
        if (delta.type === "reasoning" && delta.signature !== undefined) {
          const part = parts.at(-1);
          if (part?.type === "reasoning") part.signature = delta.signature;
        }
        break;
      }
      case "tool-call":
        (message.toolCalls ??= []).push(delta.call);
        break;
      case "approval-request":
        (message.approvalRequests ??= []).push(delta.request);
        break;
      case "provider-result":
        (message.providerResults ??= []).push(delta.result);
        break;
      case "usage":
        message.usage = { ...message.usage, ...delta.usage };
        break;
      case "id":
        message.id = delta.id;
        if (delta.model !== undefined) message.model = delta.model;
        break;
    }
  }
  // A text-only answer is stored as a string, like a model that returns a message.
  if (parts.length === 1 && parts[0]?.type === "text") message.content = parts[0].text;
  else if (parts.length === 0) message.content = "";
  return message;
}
