/**
 * The `messages` channel of one run: a model's streamed deltas (text, reasoning, tool calls,
 * usage) as `message-start`, `content-block-*` and `message-finish`, and every other message a
 * node writes to state (a tool's result, a model that answered whole, a LangChain dict) as one
 * complete message once its step committed — as LangGraph's server streams both. A streamed
 * reply keeps the id it was streamed under in this run's `values` events, so a client that
 * merges the channel with the state (the SDK's message projection) shows it once.
 */
import { isRecord, type Dict } from "../mapping/json.ts";
import { messagesOut } from "../mapping/messages.ts";
import type { Emission, Namespace } from "./protocol.ts";

/** A core `messages` event, as far as this channel reads it. */
export interface MessageDeltaEvent {
  namespace: Namespace;
  node: string;
  taskId: string;
  runId: string;
  delta: unknown;
}

/** The content block a streamed message has open. */
type OpenBlock = { kind: "text" | "reasoning"; index: number; value: string } | null;

/** One streamed model message in progress. */
interface OpenMessage {
  id: string;
  namespace: Namespace;
  node: string;
  block: OpenBlock;
  blocks: number;
  usage: Dict | undefined;
  /** The provider's id of the reply (an `id` delta), which the stored message will carry. */
  providerId: string | undefined;
}

/** Rein's token counts as the protocol's `usage` (`input_tokens`, `output_tokens`, ...). */
export function usageOf(usage: unknown): Dict | undefined {
  if (!isRecord(usage)) return undefined;
  const pick = (...keys: string[]): number | undefined => {
    for (const key of keys) if (typeof usage[key] === "number") return usage[key];
    return undefined;
  };
  const out: Dict = {};
  const input = pick("inputTokens", "input_tokens");
  const output = pick("outputTokens", "output_tokens");
  const total = pick("totalTokens", "total_tokens");
  if (input !== undefined) out["input_tokens"] = input;
  if (output !== undefined) out["output_tokens"] = output;
  if (total !== undefined) out["total_tokens"] = total;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The messages a node's update wrote (a list or a single message), as raw objects. */
export function writtenMessages(update: unknown): Dict[] {
  if (!isRecord(update)) return [];
  const raw = update["messages"];
  return (Array.isArray(raw) ? raw : isRecord(raw) ? [raw] : []).filter(isRecord);
}

const ROLES = new Set(["ai", "human", "system", "tool"]);

/** A tool call (Rein's or LangChain's) as the protocol's finished `tool_call` block. */
function toolCallBlock(call: Dict): Dict {
  return {
    type: "tool_call",
    id: call["id"] ?? null,
    name: call["name"],
    args: call["args"] ?? {},
  };
}

/** A block that does not stream: its start and its finish, at `index`. */
function wholeBlock(at: (data: Dict) => Emission, index: number, block: Dict): Emission[] {
  return [
    at({ event: "content-block-start", index, content: block }),
    at({ event: "content-block-finish", index, content: block }),
  ];
}

/** The events of one complete message (a LangChain dict), block by block. */
export function completeMessage(namespace: Namespace, message: Dict, node?: string): Emission[] {
  const type = typeof message["type"] === "string" ? message["type"] : "ai";
  const at = (data: Dict): Emission => ({
    method: "messages",
    namespace,
    ...(node !== undefined ? { node } : {}),
    data,
  });
  const out: Emission[] = [
    at({
      event: "message-start",
      role: ROLES.has(type) ? type : "ai",
      id: message["id"],
      ...(type === "tool" ? { tool_call_id: message["tool_call_id"] } : {}),
    }),
  ];
  const content = message["content"];
  const parts: Dict[] =
    typeof content === "string"
      ? [{ type: "text", text: content }]
      : Array.isArray(content)
        ? content.filter(isRecord)
        : [];
  const calls = Array.isArray(message["tool_calls"]) ? message["tool_calls"].filter(isRecord) : [];
  const blocks = [
    ...parts.map((part) =>
      part["type"] === "reasoning" && typeof part["text"] === "string"
        ? { type: "reasoning", reasoning: part["text"] }
        : part,
    ),
    ...calls.map(toolCallBlock),
  ];
  blocks.forEach((block, index) => out.push(...wholeBlock(at, index, block)));
  const usage = usageOf(message["usage_metadata"]);
  out.push(at({ event: "message-finish", ...(usage ? { usage } : {}) }));
  return out;
}

/**
 * The `messages` channel of one run. Fed the run's core events in order: `delta` for each model
 * delta, `taskEnded` when a task ends, `update` for each node update, `values` for each state.
 */
export class MessageChannel {
  private readonly open = new Map<string, OpenMessage>();
  /** Ids of messages streamed by a task whose update has not come yet, by task. */
  private readonly streamedByTask = new Map<string, string>();
  /** The reply object a streamed task wrote, with the id it was streamed under. */
  private readonly replies = new WeakMap<object, string>();
  /** The id each streamed reply was streamed under, by the provider's id of it. */
  private readonly byProviderId = new Map<string, string>();
  /** Ids already on the channel (streamed, or sent whole). */
  private readonly sent = new Set<string>();
  /** Message ids of the latest `values` of each namespace in this run. */
  private readonly known = new Map<string, Set<string>>();
  /** Messages written by updates at each namespace since its latest `values`. */
  private readonly written = new Map<string, number>();
  private seq = 0;

  /** The events of one model delta. */
  delta(event: MessageDeltaEvent): Emission[] {
    const delta = isRecord(event.delta) ? event.delta : {};
    const out: Emission[] = [];
    let open = this.open.get(event.taskId);
    if (!open) {
      open = {
        id: `msg-${event.runId}-${event.taskId}-${++this.seq}`,
        namespace: event.namespace,
        node: event.node,
        block: null,
        blocks: 0,
        usage: undefined,
        providerId: undefined,
      };
      this.open.set(event.taskId, open);
      this.sent.add(open.id);
      out.push(this.at(open, { event: "message-start", role: "ai", id: open.id }));
    }
    switch (delta["type"]) {
      case "text":
      case "reasoning": {
        const kind = delta["type"];
        const text = typeof delta["text"] === "string" ? delta["text"] : "";
        if (open.block?.kind !== kind) {
          out.push(...this.closeBlock(open));
          open.block = { kind, index: open.blocks++, value: "" };
          out.push(
            this.at(open, {
              event: "content-block-start",
              index: open.block.index,
              content:
                kind === "text" ? { type: "text", text: "" } : { type: "reasoning", reasoning: "" },
            }),
          );
        }
        open.block.value += text;
        out.push(
          this.at(open, {
            event: "content-block-delta",
            index: open.block.index,
            delta:
              kind === "text"
                ? { type: "text-delta", text }
                : { type: "reasoning-delta", reasoning: text },
          }),
        );
        break;
      }
      case "tool-call": {
        const call = isRecord(delta["call"]) ? delta["call"] : {};
        if (call["providerExecuted"] === true) break;
        out.push(...this.closeBlock(open));
        out.push(...wholeBlock((data) => this.at(open, data), open.blocks++, toolCallBlock(call)));
        break;
      }
      case "usage":
        open.usage = usageOf(delta["usage"]);
        break;
      case "id":
        if (typeof delta["id"] === "string") open.providerId = delta["id"];
        break;
      default:
        break;
    }
    return out;
  }

  /** The id of the message `taskId` is streaming now, if any. */
  streamingId(taskId: string): string | undefined {
    return this.open.get(taskId)?.id;
  }

  /** The id a message a node wrote was streamed under, when it is a streamed reply. */
  streamedIdOf(message: object): string | undefined {
    return this.replies.get(message);
  }

  /** A task ended: its streamed message, if any, is finished. */
  taskEnded(taskId: string): Emission[] {
    const open = this.open.get(taskId);
    if (!open) return [];
    this.open.delete(taskId);
    this.streamedByTask.set(taskId, open.id);
    if (open.providerId !== undefined) this.byProviderId.set(open.providerId, open.id);
    return [
      ...this.closeBlock(open),
      this.at(open, { event: "message-finish", ...(open.usage ? { usage: open.usage } : {}) }),
    ];
  }

  /** Closes every message still open (the run ended). */
  finishAll(): Emission[] {
    return [...this.open.keys()].flatMap((taskId) => this.taskEnded(taskId));
  }

  /** A node's update: remembers its messages (the streamed reply among them). */
  update(namespace: Namespace, taskId: string, update: unknown): void {
    const messages = writtenMessages(update);
    const key = namespace.join("\u0000");
    this.written.set(key, (this.written.get(key) ?? 0) + messages.length);
    const streamed = this.streamedByTask.get(taskId);
    if (streamed === undefined) return;
    this.streamedByTask.delete(taskId);
    const reply = messages.findLast((m) => m["role"] === "assistant" || m["type"] === "ai");
    if (reply) this.replies.set(reply, streamed);
  }

  /**
   * A state of `namespace`: its messages as LangChain dicts (a streamed reply under the id it was
   * streamed with), and the complete-message events of the messages new in it that were not
   * streamed. The first state of a namespace in a run counts as new only what this run's
   * updates wrote (the conversation before the run and the run's input are not replayed).
   */
  values(namespace: Namespace, values: Dict): { values: Dict; emissions: Emission[] } {
    const raw = values["messages"];
    const shown = messagesOut(values);
    if (!Array.isArray(raw)) return { values: shown, emissions: [] };
    const list = (shown["messages"] as unknown[]).map((m, i) => {
      if (!isRecord(m)) return m;
      const source: unknown = raw[i];
      const id =
        (isRecord(source) ? this.replies.get(source) : undefined) ??
        (typeof m["id"] === "string" ? this.byProviderId.get(m["id"]) : undefined);
      return id !== undefined ? { ...m, id } : m;
    });
    const key = namespace.join("\u0000");
    const before = this.known.get(key);
    const written = this.written.get(key) ?? 0;
    this.written.set(key, 0);
    const ids = list.map((m) => (isRecord(m) && typeof m["id"] === "string" ? m["id"] : null));
    this.known.set(key, new Set(ids.filter((id): id is string => id !== null)));
    const fresh = list.filter((m, i) => {
      const id = ids[i];
      if (id === null || id === undefined || !isRecord(m) || this.sent.has(id)) return false;
      return before ? !before.has(id) : i >= list.length - written;
    }) as Dict[];
    const emissions: Emission[] = [];
    for (const message of fresh) {
      this.sent.add(message["id"] as string);
      emissions.push(...completeMessage(namespace, message));
    }
    return { values: { ...shown, messages: list }, emissions };
  }

  private closeBlock(open: OpenMessage): Emission[] {
    const block = open.block;
    if (!block) return [];
    open.block = null;
    return [
      this.at(open, {
        event: "content-block-finish",
        index: block.index,
        content:
          block.kind === "text"
            ? { type: "text", text: block.value }
            : { type: "reasoning", reasoning: block.value },
      }),
    ];
  }

  private at(open: OpenMessage, data: Dict): Emission {
    return { method: "messages", namespace: open.namespace, node: open.node, data };
  }
}
