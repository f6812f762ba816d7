/**
 * Rein's decision payloads (`{ action, args, description, allow }`, what `toolNode` and the
 * decision convention raise) offered in the two shapes LangGraph UIs render — agent-chat-ui's
 * `{ action_requests, review_configs }` and Agent Inbox's `HumanInterrupt` — and those UIs'
 * decisions turned back into Rein answers, which the interrupt's answer schema then checks as
 * any answer.
 */
import { isRecord } from "./json.ts";

/** Rein's decision payload convention, as far as this mapping reads it. */
interface DecisionPayload {
  action: string;
  args: Record<string, unknown>;
  description?: string;
  allow: { accept?: boolean; edit?: boolean; respond?: boolean; ignore?: boolean };
  argsSchema?: unknown;
}

/** Whether a payload follows Rein's decision convention. */
export function isDecisionPayload(payload: unknown): payload is DecisionPayload {
  return (
    isRecord(payload) &&
    typeof payload["action"] === "string" &&
    isRecord(payload["args"]) &&
    isRecord(payload["allow"])
  );
}

/**
 * The value an interrupt shows in the protocol: a decision payload keeps its own fields and
 * gains agent-chat-ui's `action_requests` / `review_configs` and Agent Inbox's `action_request`
 * / `config` / `description`; any other payload passes through unchanged.
 */
export function approvalValueOf(payload: unknown): unknown {
  if (!isDecisionPayload(payload)) return payload;
  const { allow } = payload;
  const decisions = [
    ...(allow.accept ? ["approve"] : []),
    ...(allow.edit ? ["edit"] : []),
    ...(allow.respond || allow.ignore ? ["reject"] : []),
  ];
  return {
    ...payload,
    action_requests: [
      { name: payload.action, args: payload.args, description: payload.description ?? "" },
    ],
    review_configs: [
      {
        action_name: payload.action,
        allowed_decisions: decisions,
        ...(payload.argsSchema !== undefined ? { args_schema: payload.argsSchema } : {}),
      },
    ],
    action_request: { action: payload.action, args: payload.args },
    config: {
      allow_accept: allow.accept === true,
      allow_edit: allow.edit === true,
      allow_respond: allow.respond === true,
      allow_ignore: allow.ignore === true,
    },
    description: payload.description ?? "",
  };
}

/** agent-chat-ui's decision (`{ decisions: [{ type, edited_action?, message? }] }`), as Rein's. */
function fromChatUi(value: Record<string, unknown>): unknown {
  const decisions = value["decisions"];
  if (!Array.isArray(decisions) || decisions.length !== 1 || !isRecord(decisions[0])) return value;
  const decision = decisions[0];
  const message = typeof decision["message"] === "string" ? decision["message"] : undefined;
  switch (decision["type"]) {
    case "approve":
      return { type: "accept" };
    case "edit": {
      const edited = decision["edited_action"];
      return isRecord(edited) ? { type: "edit", args: edited["args"] } : value;
    }
    case "reject":
      return message !== undefined
        ? { type: "respond", message, text: message }
        : { type: "ignore" };
    default:
      return value;
  }
}

/** Agent Inbox's `HumanResponse` (`{ type: accept|edit|response|ignore, args }`), as Rein's. */
function fromInbox(response: Record<string, unknown>): unknown {
  const args = response["args"];
  switch (response["type"]) {
    case "accept":
      return { type: "accept" };
    case "edit":
      return isRecord(args) && isRecord(args["args"])
        ? { type: "edit", args: args["args"] }
        : response;
    case "response":
      return typeof args === "string" ? { type: "respond", message: args, text: args } : response;
    case "ignore":
      return { type: "ignore" };
    default:
      return response;
  }
}

/**
 * The Rein answer of a UI's decision on a decision payload: agent-chat-ui's `{ decisions: [one] }`
 * and Agent Inbox's `[HumanResponse]` (or the bare response) become `{ type: accept | edit |
 * respond | ignore, ... }`; anything else (a Rein answer already) passes unchanged. The
 * interrupt's own answer schema checks the result, as for every answer.
 */
export function answerFromUi(payload: unknown, value: unknown): unknown {
  if (!isDecisionPayload(payload)) return value;
  if (Array.isArray(value) && value.length === 1 && isRecord(value[0]) && "type" in value[0])
    return fromInbox(value[0]);
  if (!isRecord(value)) return value;
  if ("decisions" in value) return fromChatUi(value);
  if (
    value["type"] === "response" ||
    (value["type"] === "edit" && isRecord(value["args"]) && "action" in value["args"])
  )
    return fromInbox(value);
  return value;
}
