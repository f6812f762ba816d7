/**
 * What a reviewer needs to decide, carried in the decision payload as `context`: why the agent
 * asks (its own words), the conversation that led to the call, and any facts or links a node
 * adds. The tool node fills it from the asking agent's conversation; any node that raises a
 * decision can fill it by hand. The console shows it above the arguments.
 */
import { textOf, type Message } from "./messages.ts";

/** One message of the conversation that led to a call, as plain text. */
export interface ContextMessage {
  role: Message["role"];
  /** The tool's name, for a tool result. */
  name?: string;
  text: string;
}

/**
 * The decision convention's `context` (docs/console.md): `summary` says why the agent asks;
 * `messages` are the last turns before the call, oldest first; `facts` are labelled values
 * (`Customer: Dana Reyes`); `links` point at records elsewhere.
 */
export interface DecisionContext {
  summary: string;
  messages?: ContextMessage[];
  facts?: { label: string; value: string }[];
  links?: { label: string; href: string }[];
}

/** How many turns before the call the context keeps, and how long each may be. */
const KEPT_MESSAGES = 6;
const MAX_TEXT = 2_000;

const clip = (text: string): string =>
  text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text;

/**
 * The context of a tool call from the conversation that asked for it: the model's text beside
 * the call as the summary (its stated reason), and the last messages before it. Deterministic in
 * the conversation, as a payload must be (a re-run compares it with the stored one).
 */
export function toolCallContext(
  messages: readonly Message[],
  callId: string,
  fallback: string,
): DecisionContext {
  const at = messages.findLastIndex(
    (m) => m.role === "assistant" && (m.toolCalls ?? []).some((c) => c.id === callId),
  );
  const asking = at >= 0 ? (messages[at] as Message) : null;
  const reason = asking ? textOf(asking).trim() : "";
  const before = messages
    .slice(0, Math.max(at, 0))
    .slice(-KEPT_MESSAGES)
    .map((m): ContextMessage => {
      const text = clip(textOf(m).trim());
      return m.role === "tool" ? { role: m.role, name: m.name, text } : { role: m.role, text };
    })
    .filter((m) => m.text !== "");
  return {
    summary: clip(reason || fallback),
    ...(before.length > 0 ? { messages: before } : {}),
  };
}
