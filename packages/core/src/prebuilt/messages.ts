/**
 * The message shapes of the prebuilt tool-calling agent: content parts (text, image, file,
 * reasoning), tool calls, tool results with what actually ran, ids and token usage. The adapters
 * (`@rein/ai-sdk`, `@rein/langchain`, `@rein/openai`) convert these to and from their clients'
 * formats; `docs/agents.md` has the mapping.
 */

/** A tool call requested by the model. `id` is unique within the conversation. */
export interface ToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
  /**
   * The provider runs this call itself (a hosted tool, such as a provider-side MCP server): Rein
   * never runs it, and keeps it so the provider gets its history back. It reaches the tool node
   * only when the provider asks for approval ({@link AssistantMessage.approvalRequests}).
   */
  providerExecuted?: boolean;
}

/** A provider's request for approval of a call it runs itself (the AI SDK's `tool-approval-request`). */
export interface ApprovalRequest {
  /** The provider's id of the request; the answer refers to it. */
  approvalId: string;
  /** The provider-executed call in `toolCalls` the request is for. */
  toolCallId: string;
  /** What the provider needs to see the request again in a later turn, kept verbatim. */
  providerOptions?: Record<string, Record<string, unknown>>;
}

/** The result of a provider-executed call, as the provider reported it. */
export interface ProviderToolResult {
  toolCallId: string;
  name: string;
  /** The provider's output, verbatim. */
  output: unknown;
  isError?: boolean;
  /** What the provider needs to see the call again in a later turn, kept verbatim. */
  providerOptions?: Record<string, Record<string, unknown>>;
}

/** Plain text. */
export interface TextPart {
  type: "text";
  text: string;
}

/** An image, by URL or as base64 data. */
export interface ImagePart {
  type: "image";
  /** `https:` or `data:` URL. */
  url?: string;
  /** Base64 data (without a `data:` prefix). */
  data?: string;
  mediaType?: string;
}

/** A file (PDF, audio...), by URL or as base64 data. */
export interface FilePart {
  type: "file";
  url?: string;
  data?: string;
  mediaType: string;
  filename?: string;
}

/**
 * The model's reasoning. `signature` (or `redacted`) is kept verbatim: providers refuse a
 * follow-up turn whose reasoning was altered.
 */
export interface ReasoningPart {
  type: "reasoning";
  text: string;
  signature?: string;
  redacted?: boolean;
  /** Provider-specific data (e.g. the AI SDK's `providerOptions`), kept verbatim. */
  providerOptions?: Record<string, Record<string, unknown>>;
}

/** One piece of message content. Tool calls live in `toolCalls`, tool results in tool messages. */
export type ContentPart = TextPart | ImagePart | FilePart | ReasoningPart;

/** Token counts of one model call. */
export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  reasoningTokens?: number;
  cachedInputTokens?: number;
}

/** What a reviewer decided about a tool call that needed approval. */
export interface ToolReview {
  decision: "accept" | "edit" | "respond" | "ignore";
  /** Who answered (the resume command's `actor`), when known. */
  actor: string | null;
  /** The interrupt the decision answered. */
  interruptId: string;
  /** The model's arguments, when the reviewer edited them. */
  originalArgs?: Record<string, unknown>;
}

/** Marks a user message that carries a person's steering instruction (see `docs/agents.md`). */
export interface SteeringMeta {
  /** Id of the {@link SteeringRecord} (messages are deduplicated by it). */
  id: string;
  actor: string;
  interruptId?: string;
}

/** A system or user message. */
export interface UserMessage {
  role: "system" | "user";
  content: string | ContentPart[];
  id?: string;
  /** Set when the message is a steering instruction delivered to the model. */
  steering?: SteeringMeta;
}

/** A model's message: content, the tool calls it asks for, its id and usage. */
export interface AssistantMessage {
  role: "assistant";
  content: string | ContentPart[];
  toolCalls?: ToolCall[];
  id?: string;
  usage?: Usage;
  /** The model's own name for the response (e.g. `"gpt-4o-2024-08-06"`), when reported. */
  model?: string;
  /** Approvals the provider asks for before it runs calls of its own (each becomes an interrupt). */
  approvalRequests?: ApprovalRequest[];
  /** Results of calls the provider ran itself, kept so the provider gets its history back. */
  providerResults?: ProviderToolResult[];
}

/** The result of one tool call, and what actually ran. */
export interface ToolMessage {
  role: "tool";
  content: string | ContentPart[];
  toolCallId: string;
  name: string;
  status: ToolStatus;
  id?: string;
  /** The arguments the tool ran with (the reviewer's, when edited). */
  args?: Record<string, unknown>;
  /** The reviewer's decision, when the call needed approval. */
  review?: ToolReview;
  /**
   * The answer to a provider's approval request (the AI SDK's `tool-approval-response`): the
   * provider runs the call when `approved`, and is told `reason` otherwise.
   */
  approval?: { approvalId: string; approved: boolean; reason?: string };
}

/** One message of a conversation. */
export type Message = UserMessage | AssistantMessage | ToolMessage;

/**
 * What became of a tool call: it ran (`done`), failed (`error`), a reviewer answered in its place
 * (`responded`) or declined it (`ignored`), or a reviewer approved a call the provider runs
 * itself (`approved`).
 */
export type ToolStatus = "done" | "error" | "responded" | "ignored" | "approved";

/** Whether a tool message says the call was declined (answered in its place, or ignored). */
export function isDeclined(message: ToolMessage): boolean {
  return (
    message.status === "responded" ||
    message.status === "ignored" ||
    message.approval?.approved === false
  );
}

/** A tool as the model sees it: name, description and the JSON Schema of its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema (draft 2020-12) of the arguments object. */
  parameters: Record<string, unknown>;
}

/** What a model receives besides the messages. */
export interface ModelCallOptions {
  /** The tools it may call. */
  tools: readonly ToolSpec[];
  /** Aborted when the run is cancelled: pass it to the client. */
  signal: AbortSignal;
}

/**
 * One piece of a streamed model answer. Text and reasoning arrive as deltas; tool calls, usage
 * and the message id as whole parts. The stream's parts together make the assistant message.
 */
export type ModelDelta =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string; signature?: string }
  | { type: "tool-call"; call: ToolCall }
  | { type: "approval-request"; request: ApprovalRequest }
  | { type: "provider-result"; result: ProviderToolResult }
  | { type: "usage"; usage: Usage }
  | { type: "id"; id: string; model?: string };

/** What a model returns: a message, or a stream of deltas. */
export type ModelOutput = Message | AsyncIterable<ModelDelta>;

/**
 * A model: messages in, the next assistant message out (or a stream of its deltas). Any
 * function works, so tests and demos run without a network; the adapters wrap real clients.
 */
export type Model = (
  messages: readonly Message[],
  options: ModelCallOptions,
) => Promise<ModelOutput> | ModelOutput;

/**
 * The calls of the last assistant message, if the last message is one, that the tool node
 * handles: calls Rein runs, and provider-executed calls the provider asked approval for.
 */
export function pendingToolCalls(messages: readonly Message[]): ToolCall[] {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as Message;
    // Steering notes the tool node appends after the results do not end the tool turn.
    if (m.role === "user" && m.steering) continue;
    if (m.role !== "assistant") return [];
    const asked = new Set((m.approvalRequests ?? []).map((r) => r.toolCallId));
    return (m.toolCalls ?? []).filter((c) => !c.providerExecuted || asked.has(c.id));
  }
  return [];
}

/** The provider's approval request for `call` in the last assistant message, if any. */
export function approvalRequestFor(
  messages: readonly Message[],
  call: ToolCall,
): ApprovalRequest | undefined {
  if (!call.providerExecuted) return undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as Message;
    if (m.role === "assistant") return m.approvalRequests?.find((r) => r.toolCallId === call.id);
  }
  return undefined;
}

/** The text of a message's content (text parts joined; other parts skipped). */
export function textOf(message: Pick<Message, "content">): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .filter((p): p is TextPart => p.type === "text")
    .map((p) => p.text)
    .join("");
}

/** The content as parts (a string becomes one text part). */
export function partsOf(message: Pick<Message, "content">): ContentPart[] {
  if (typeof message.content === "string")
    return message.content === "" ? [] : [{ type: "text", text: message.content }];
  return message.content;
}

/**
 * The conversation as the model should see it: each assistant tool call shows the arguments the
 * tool actually ran with (a reviewer's edit replaces the model's), so the history never pairs
 * the model's original arguments with the result of an edited call. Review records stay in the
 * stored conversation and are not sent.
 */
export function modelView(messages: readonly Message[]): Message[] {
  const ran = new Map<string, Record<string, unknown>>();
  for (const m of messages) if (m.role === "tool" && m.args) ran.set(m.toolCallId, m.args);
  return messages.map((m) => {
    if (m.role === "tool" && m.review) {
      const { review: _review, ...rest } = m;
      return rest;
    }
    if (m.role === "assistant" && m.toolCalls?.some((c) => ran.has(c.id)))
      return { ...m, toolCalls: m.toolCalls.map((c) => ({ ...c, args: ran.get(c.id) ?? c.args })) };
    return m;
  });
}
