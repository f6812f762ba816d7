/**
 * The `tools` channel of one run, read off the graph's state as it changes: the tool calls a
 * model's message asks for, `tool-started` when the prebuilt agent's `tools` node starts running
 * them, and `tool-finished` or `tool-error` when its tool message is written. A call whose result
 * is written by a node that was not seen starting (a resumed run, another tool node) gets its
 * `tool-started` right before its end. When the tool node pauses (a call waits for its
 * approval), its started calls end with `tool-error` code `interrupted`, and the run after the
 * answer starts and ends them again.
 */
import { isRecord, type Dict } from "../mapping/json.ts";
import type { Emission, Namespace } from "./protocol.ts";
import { writtenMessages } from "./messages.ts";

/** The node name of the prebuilt agent's tool node. */
const TOOL_NODE = "tools";

/** A tool call a model asked for. */
interface Call {
  id: string;
  name: string;
  args: unknown;
}

/** The tool calls of a model message: Rein's `toolCalls` or LangChain's `tool_calls`. */
function callsOf(message: Dict): Call[] {
  const raw = message["role"] === "assistant" ? message["toolCalls"] : message["tool_calls"];
  if (!Array.isArray(raw)) return [];
  return raw
    .filter(isRecord)
    .filter((c) => typeof c["id"] === "string" && c["providerExecuted"] !== true)
    .map((c) => ({
      id: c["id"] as string,
      name: typeof c["name"] === "string" ? c["name"] : "tool",
      args: c["args"] ?? {},
    }));
}

/** The result of a call, from its tool message (Rein's or a LangChain dict). */
function resultOf(message: Dict): {
  id: string;
  name: string;
  args: unknown;
  failed: string | null;
  declined: boolean;
  output: unknown;
} | null {
  const rein = message["role"] === "tool";
  if (!rein && message["type"] !== "tool") return null;
  const id = rein ? message["toolCallId"] : message["tool_call_id"];
  if (typeof id !== "string") return null;
  const status = message["status"];
  const content = message["content"];
  const failed = status === "error" || status === "ignored";
  return {
    id,
    name: typeof message["name"] === "string" ? message["name"] : "tool",
    args: message["args"],
    failed: failed ? (typeof content === "string" ? content : JSON.stringify(content)) : null,
    declined: status === "ignored",
    output: content,
  };
}

/** The `tools` channel of one run; fed its `tasks` starts and node updates in order. */
export class ToolChannel {
  /** Calls asked for at each namespace and not finished, by call id. */
  private readonly pending = new Map<string, Map<string, Call>>();
  /** Calls started in this run and not ended, with the node running them. */
  private readonly started = new Map<string, { namespace: Namespace; node: string }>();
  /** A task started: the tool node starts every pending call of its namespace. */
  taskStarted(namespace: Namespace, node: string): Emission[] {
    if (node !== TOOL_NODE) return [];
    const calls = this.pending.get(namespace.join("\u0000"));
    if (!calls) return [];
    return [...calls.values()].flatMap((call) => this.start(namespace, node, call));
  }

  /**
   * A task of `namespace` paused (a call waits for its approval): the calls it started end with
   * `tool-error` (code `interrupted`), as LangGraph reports a tool that raised an interrupt; the
   * run that continues after the answer starts them again and ends them with their results.
   */
  paused(namespace: Namespace): Emission[] {
    const key = namespace.join("\u0000");
    const out: Emission[] = [];
    for (const [id, at] of this.started) {
      if (at.namespace.join("\u0000") !== key) continue;
      this.started.delete(id);
      out.push({
        method: "tools",
        namespace,
        node: at.node,
        data: {
          event: "tool-error",
          tool_call_id: id,
          message: "The call waits for an answer; it runs once the thread is resumed.",
          code: "interrupted",
        },
      });
    }
    return out;
  }

  /** A node's update: the calls its model message asks for, the results its tool messages carry. */
  update(namespace: Namespace, node: string, update: unknown): Emission[] {
    const key = namespace.join("\u0000");
    const out: Emission[] = [];
    for (const message of writtenMessages(update)) {
      const calls = callsOf(message);
      if (calls.length > 0) {
        let map = this.pending.get(key);
        if (!map) this.pending.set(key, (map = new Map<string, Call>()));
        for (const call of calls) map.set(call.id, call);
        continue;
      }
      const result = resultOf(message);
      if (!result) continue;
      const asked = this.pending.get(key)?.get(result.id);
      this.pending.get(key)?.delete(result.id);
      out.push(
        ...this.start(namespace, node, {
          id: result.id,
          name: asked?.name ?? result.name,
          args: result.args ?? asked?.args ?? {},
        }),
      );
      this.started.delete(result.id);
      out.push({
        method: "tools",
        namespace,
        node,
        data:
          result.failed !== null
            ? {
                event: "tool-error",
                tool_call_id: result.id,
                message: result.failed,
                ...(result.declined ? { code: "declined" } : {}),
              }
            : { event: "tool-finished", tool_call_id: result.id, output: result.output },
      });
    }
    return out;
  }

  private start(namespace: Namespace, node: string, call: Call): Emission[] {
    if (this.started.has(call.id)) return [];
    this.started.set(call.id, { namespace, node });
    return [
      {
        method: "tools",
        namespace,
        node,
        data: {
          event: "tool-started",
          tool_call_id: call.id,
          tool_name: call.name,
          input: call.args,
        },
      },
    ];
  }
}
