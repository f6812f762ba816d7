/**
 * The wire shapes of LangGraph's v2 Agent Server protocol that this layer speaks: command
 * envelopes, responses, error codes, channels and event envelopes, as `@langchain/protocol`
 * 0.0.21 declares them (declared here so the published package needs no LangChain dependency).
 */

/** A namespace path: `[]` is the root graph, `["refund_agent"]` a sub-agent below it. */
export type Namespace = string[];

/** The error codes the protocol defines (`ErrorResponse.error`). */
export const PROTOCOL_ERROR_CODES = [
  "invalid_argument",
  "unknown_command",
  "unknown_error",
  "no_such_run",
  "no_such_subscription",
  "no_such_namespace",
  "no_such_interrupt",
  "no_such_checkpoint",
  "permission_denied",
  "not_supported",
] as const;

/** One of {@link PROTOCOL_ERROR_CODES}. */
export type ProtocolErrorCode = (typeof PROTOCOL_ERROR_CODES)[number];

/** The channels an event stream may ask for (`custom:<name>` narrows `custom` to one name). */
export const CHANNELS = [
  "values",
  "updates",
  "messages",
  "tools",
  "lifecycle",
  "input",
  "checkpoints",
  "tasks",
  "custom",
] as const;

/** A channel name of {@link CHANNELS}, or `custom:<name>`. */
export type Channel = (typeof CHANNELS)[number] | `custom:${string}`;

/** The status of one agent (namespace) in `lifecycle` events and `agent.getTree`. */
export type AgentStatus = "started" | "running" | "completed" | "failed" | "interrupted";

/** The methods of events this layer emits. */
export type EventMethod =
  | "lifecycle"
  | "values"
  | "updates"
  | "messages"
  | "tools"
  | "custom"
  | "checkpoints"
  | "tasks"
  | "input.requested"
  | "input.answered";

/** An event as it goes over SSE: the `data:` line of one frame. */
export interface ProtocolEvent {
  type: "event";
  method: EventMethod;
  params: {
    namespace: Namespace;
    timestamp: number;
    node?: string;
    data: unknown;
  };
  /** Monotonic within this server's log of the thread; `since` replays after it. */
  seq: number;
  /** Unique across restarts of the server (clients deduplicate by it). */
  event_id: string;
}

/** One protocol event to emit, before the thread's log numbers it. */
export interface Emission {
  method: EventMethod;
  namespace: Namespace;
  data: unknown;
  node?: string;
}

/** The answer to a command that succeeded. */
export interface CommandSuccess {
  type: "success";
  id: number;
  result: Record<string, unknown>;
  /** For a command that started a run: the seq of the last event before it. */
  meta?: { applied_through_seq: number };
}

/** The answer to a command that was refused (sent with a 4xx status). */
export interface CommandError {
  type: "error";
  id: number | null;
  error: ProtocolErrorCode;
  message: string;
  /** Rein's own error code and data (pending interrupts, latest head), to act on. */
  details?: Record<string, unknown>;
}

/** A node of `agent.getTree`. */
export interface AgentTreeNode {
  namespace: Namespace;
  status: AgentStatus;
  graph_name: string;
  children?: AgentTreeNode[];
  metadata?: Record<string, unknown>;
}

/** What a stream request filters on (`POST /threads/:id/stream/events` body). */
export interface EventFilter {
  channels: readonly string[];
  namespaces?: readonly Namespace[] | undefined;
  depth?: number | undefined;
}
