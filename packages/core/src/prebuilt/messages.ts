/**
 * The message shapes of the prebuilt tool-calling agent. A "model" is any async function from
 * messages to a message, so tests and demos run without a network.
 */

/** A tool call requested by the model. `id` is unique within the conversation. */
export interface ToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** One message of a conversation. */
export type Message =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string; toolCalls?: ToolCall[] }
  | { role: "tool"; content: string; toolCallId: string; name: string; status: ToolStatus };

/** What became of a tool call. */
export type ToolStatus = "done" | "error" | "responded" | "ignored";

/** A model: messages in, the next assistant message out. */
export type Model = (messages: readonly Message[]) => Promise<Message> | Message;

/** The last assistant message's tool calls, if the last message is one. */
export function pendingToolCalls(messages: readonly Message[]): ToolCall[] {
  const last = messages.at(-1);
  return last?.role === "assistant" ? (last.toolCalls ?? []) : [];
}
