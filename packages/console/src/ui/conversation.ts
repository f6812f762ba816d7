/**
 * An agent's messages as a reviewer reads them: who spoke (a person, the AI, a tool, the system,
 * a steering note), what was said, the tool calls the AI asked for and what became of each call.
 * It reads the shapes the prebuilt agent stores (`{ role, content, toolCalls, … }`) and LangChain's
 * serialised messages (`{ type: "human" | "ai" | "tool", … }`); anything else is not a
 * conversation and stays with the run's other values.
 */
import { argChanges } from "./decision.ts";
import { formatValue, humanize } from "./format.ts";

/** Who a turn is from. */
export type Speaker = "human" | "ai" | "tool" | "system";

/** A tool call the AI asked for: its action in words and its arguments. */
export interface CallView {
  id: string;
  action: string;
  args: { name: string; text: string }[];
}

/** One message of a conversation, ready to show. */
export interface Turn {
  speaker: Speaker;
  /** The label a person reads: `Human`, `AI`, `Tool · issue_refund`, `Steering · alice@acme`. */
  label: string;
  text: string;
  calls: CallView[];
  /** What became of a tool call, or who sent a steering note: `ran, edited by alice@acme: …`. */
  note: string | null;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const ROLES: Record<string, Speaker> = {
  user: "human",
  human: "human",
  assistant: "ai",
  ai: "ai",
  tool: "tool",
  system: "system",
};

/** The speaker of a message-shaped value, or null when it is not a message. */
function speakerOf(value: unknown): Speaker | null {
  if (!isObject(value)) return null;
  const role = typeof value["role"] === "string" ? value["role"] : value["type"];
  return typeof role === "string" ? (ROLES[role] ?? null) : null;
}

/** Whether a value is a non-empty list of messages. */
export function isConversation(value: unknown): value is Record<string, unknown>[] {
  return Array.isArray(value) && value.length > 0 && value.every((m) => speakerOf(m) !== null);
}

/** The text of a message's content: a string, or its parts (text kept, the rest named). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: unknown) => {
      if (!isObject(part)) return "";
      if (part["type"] === "text" && typeof part["text"] === "string") return part["text"];
      if (part["type"] === "reasoning") return "";
      if (part["type"] === "image") return "[image]";
      if (part["type"] === "file")
        return `[file${typeof part["filename"] === "string" ? ` ${part["filename"]}` : ""}]`;
      return "";
    })
    .filter((text) => text !== "")
    .join("\n");
}

function argsOf(value: unknown): Record<string, unknown> {
  return isObject(value) ? value : {};
}

function callsOf(message: Record<string, unknown>): CallView[] {
  const calls = message["toolCalls"] ?? message["tool_calls"];
  if (!Array.isArray(calls)) return [];
  return calls.filter(isObject).map((call, i) => ({
    id: typeof call["id"] === "string" ? call["id"] : String(i),
    action: humanize(typeof call["name"] === "string" ? call["name"] : "tool call"),
    args: Object.entries(argsOf(call["args"])).map(([name, v]) => ({
      name,
      text: formatValue(v),
    })),
  }));
}

const TOOL_STATUS: Record<string, string> = {
  done: "ran",
  error: "failed",
  responded: "not run: the reviewer answered in its place",
  ignored: "not run: the reviewer declined it",
  approved: "approved",
};

/** What became of a tool call: its status, and the reviewer's decision with the edited values. */
function toolNote(message: Record<string, unknown>): string | null {
  const status =
    typeof message["status"] === "string" ? (TOOL_STATUS[message["status"]] ?? null) : null;
  const review = message["review"];
  if (!isObject(review)) return status;
  const by = typeof review["actor"] === "string" ? ` by ${review["actor"]}` : "";
  let said = "";
  if (review["decision"] === "accept") said = `approved${by}`;
  else if (review["decision"] === "edit") {
    const changes = argChanges(argsOf(review["originalArgs"]), argsOf(message["args"]))
      .map((c) => `${c.name} ${formatValue(c.before)} → ${formatValue(c.after)}`)
      .join(", ");
    said = `edited${by}${changes ? `: ${changes}` : ""}`;
  } else if (review["decision"] === "respond") said = `answered${by}`;
  else if (review["decision"] === "ignore") said = `declined${by}`;
  return [status, said].filter(Boolean).join(", ") || null;
}

const LABEL: Record<Speaker, string> = {
  human: "Human",
  ai: "AI",
  tool: "Tool",
  system: "System",
};

/** One message as a turn. */
export function turnOf(message: Record<string, unknown>): Turn {
  const speaker = speakerOf(message) ?? "human";
  const text = contentText(message["content"]);
  const steering = message["steering"];
  if (speaker === "human" && isObject(steering) && typeof steering["actor"] === "string")
    return {
      speaker,
      label: `Steering · ${steering["actor"]}`,
      // The agent's copy carries a "[Steering from …]" lead the label already says.
      text: text.replace(/^\[Steering from [^\]]*\]\s*/, ""),
      calls: [],
      note: null,
    };
  if (speaker === "tool") {
    const name = typeof message["name"] === "string" ? message["name"] : null;
    return {
      speaker,
      label: name ? `Tool · ${name}` : LABEL.tool,
      text,
      calls: [],
      note: toolNote(message),
    };
  }
  return { speaker, label: LABEL[speaker], text, calls: callsOf(message), note: null };
}

/** A run's values split into its conversations (by key) and everything else. */
export interface SplitValues {
  conversations: { key: string; turns: Turn[] }[];
  rest: Record<string, unknown>;
}

/** Finds the conversations among a run's values (usually `messages`), oldest message first. */
export function splitValues(values: Record<string, unknown>): SplitValues {
  const conversations: SplitValues["conversations"] = [];
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (isConversation(value)) conversations.push({ key, turns: value.map(turnOf) });
    else rest[key] = value;
  }
  return { conversations, rest };
}

/** A value in words: a line of text, or labelled fields one level down. */
export type Field = { label: string; text: string } | { label: string; fields: Field[] };

/**
 * A run's other values as labelled fields: text as it is, numbers grouped, lists joined, an
 * unset value `not set`; an object one level deep as its own fields, deeper as compact JSON.
 */
export function fieldsOf(values: Record<string, unknown>, depth = 0): Field[] {
  return Object.entries(values).map(([key, value]): Field => {
    const label = humanize(key);
    if (value === null || value === undefined) return { label, text: "not set" };
    if (Array.isArray(value)) {
      if (value.length === 0) return { label, text: "none" };
      if (value.every((v) => !isObject(v) && !Array.isArray(v)))
        return { label, text: value.map((v) => formatValue(v)).join(", ") };
    }
    if (isObject(value) && depth === 0) return { label, fields: fieldsOf(value, depth + 1) };
    return { label, text: formatValue(value) };
  });
}
