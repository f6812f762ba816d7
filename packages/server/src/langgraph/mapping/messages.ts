/**
 * Messages as LangGraph UIs render them. A graph whose state holds LangChain message dicts
 * (`{ type: "human" | "ai" | "tool", content, id, tool_calls }`) passes through unchanged; the
 * conversation of Rein's prebuilt `agent()` (`{ role: "user" | "assistant" | "tool", toolCalls,
 * toolCallId }`) is shown as LangChain dicts, and LangChain dicts sent as input to such a graph
 * become Rein messages. Only a `messages` channel is mapped, and only messages of Rein's shape.
 */
import { isRecord, type Dict } from "./json.ts";

/** Whether a value is a message of Rein's prebuilt agent (it has a `role`, no LangChain `type`). */
function isReinMessage(value: unknown): value is Dict {
  return isRecord(value) && typeof value["role"] === "string" && !("type" in value);
}

/** Whether a value is a LangChain message dict (it has a `type`, no Rein `role`). */
function isLangChainMessage(value: unknown): value is Dict {
  return isRecord(value) && typeof value["type"] === "string" && !("role" in value);
}

const TYPE_OF_ROLE: Record<string, string> = {
  user: "human",
  system: "system",
  assistant: "ai",
  tool: "tool",
};

/** One Rein message as a LangChain dict. */
export function toLangChainMessage(message: Dict, index: number): Dict {
  const role = String(message["role"]);
  const id = typeof message["id"] === "string" ? message["id"] : `msg-${index}`;
  const out: Dict = { type: TYPE_OF_ROLE[role] ?? role, content: message["content"], id };
  if (role === "assistant") {
    const calls = Array.isArray(message["toolCalls"]) ? (message["toolCalls"] as Dict[]) : [];
    out["tool_calls"] = calls.map((call) => ({
      id: call["id"],
      name: call["name"],
      args: call["args"],
      type: "tool_call",
    }));
    if (message["usage"] !== undefined) out["usage_metadata"] = message["usage"];
  }
  if (role === "tool") {
    out["tool_call_id"] = message["toolCallId"];
    out["name"] = message["name"];
    out["status"] = message["status"] === "error" ? "error" : "success";
  }
  return out;
}

/** One LangChain dict as a Rein message (input to a graph of Rein's messages). */
export function fromLangChainMessage(message: Dict): Dict {
  const type = String(message["type"]);
  const id = typeof message["id"] === "string" ? { id: message["id"] } : {};
  const content = message["content"] ?? "";
  if (type === "ai")
    return {
      role: "assistant",
      content,
      ...id,
      ...(Array.isArray(message["tool_calls"]) && message["tool_calls"].length > 0
        ? {
            toolCalls: (message["tool_calls"] as Dict[]).map((c) => ({
              id: c["id"],
              name: c["name"],
              args: c["args"] ?? {},
            })),
          }
        : {}),
    };
  if (type === "tool")
    return {
      role: "tool",
      content,
      ...id,
      toolCallId: message["tool_call_id"],
      name: message["name"] ?? "",
      status: message["status"] === "error" ? "error" : "done",
    };
  return { role: type === "system" ? "system" : "user", content, ...id };
}

/** Values as the protocol shows them: a `messages` list of Rein messages as LangChain dicts. */
export function messagesOut(values: Dict): Dict {
  const messages: unknown = values["messages"];
  if (!Array.isArray(messages)) return values;
  const list = messages as unknown[];
  if (!list.some(isReinMessage)) return values;
  return {
    ...values,
    messages: list.map((m, i) => (isReinMessage(m) ? toLangChainMessage(m, i) : m)),
  };
}

/**
 * Input as a graph of Rein's messages takes it: LangChain dicts in `messages` become Rein
 * messages. `reinMessages` says whether the graph holds Rein's messages (its current
 * `messages` hold some, or it is the prebuilt agent's); otherwise the input is unchanged.
 */
export function messagesIn(input: Dict, reinMessages: boolean): Dict {
  const messages: unknown = input["messages"];
  if (!reinMessages) return input;
  const list = Array.isArray(messages)
    ? (messages as unknown[])
    : isRecord(messages)
      ? [messages]
      : null;
  if (!list || !list.some(isLangChainMessage)) return input;
  return {
    ...input,
    messages: list.map((m) => (isLangChainMessage(m) ? fromLangChainMessage(m) : m)),
  };
}

/** Whether a graph's state holds Rein's messages, judged by the messages it holds now. */
export function holdsReinMessages(values: Dict): boolean {
  const messages = values["messages"];
  return Array.isArray(messages) && messages.some(isReinMessage);
}
