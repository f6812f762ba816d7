/**
 * What the two protocol graphs hold and ask, shared by their LangGraph.js and Rein versions so
 * both servers carry the same state and payloads: LangChain message dicts (`type`, `content`,
 * `id`, `tool_calls`) for the chat agent, an approval request in agent-chat-ui's shape, and one
 * question per sub-agent.
 */

/** A LangChain message dict as the SDK and the UIs read it. */
export interface Message {
  type: "human" | "ai" | "tool";
  content: string;
  id?: string;
  tool_calls?: { id: string; name: string; args: Record<string, unknown> }[];
}

/** A person's decision on the refund. */
export interface Decision {
  type: "approve" | "reject";
}

/** A person's answer to a sub-agent. */
export interface SubAgentAnswer {
  text: string;
}

/** The scripted agent turn: it proposes the refund as a tool call. */
export function agentReply(messages: readonly Message[]): Message {
  return {
    type: "ai",
    id: `ai-${messages.length}`,
    content: "I can refund order 1042 (EUR 40). Shall I?",
    tool_calls: [{ id: "call-1", name: "refund", args: { order: "1042", amount: 40 } }],
  };
}

/** The approval request the `approve` node raises (agent-chat-ui's HITL shape). */
export function approvalRequest(messages: readonly Message[]): unknown {
  const call = messages.at(-1)?.tool_calls?.[0];
  return {
    action_requests: [{ name: call?.name ?? "refund", args: call?.args ?? {} }],
    review_configs: [{ action_name: "refund", allowed_decisions: ["approve", "reject"] }],
  };
}

/** The tool result once the person decided. */
export function doneReply(decision: Decision): Message {
  return {
    type: "tool",
    id: "tool-1",
    content: decision.type === "approve" ? "refunded EUR 40 on order 1042" : "refund rejected",
  };
}

/** What sub-agent `name` asks about `ticket`. */
export function askFor(name: string, ticket: string): unknown {
  return { agent: name, question: `${name}: proceed with ticket ${ticket}?` };
}

/** The input that starts a refund conversation. */
export const REFUND_INPUT = {
  messages: [{ type: "human", id: "human-0", content: "Please refund order 1042." }],
} as const;

/** The input that starts a fan-out. */
export const FANOUT_INPUT = { ticket: "T-7" } as const;
