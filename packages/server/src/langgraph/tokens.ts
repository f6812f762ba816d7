/**
 * A model's streamed deltas as LangGraph's `messages-tuple` events: `[chunk, metadata]`, each
 * chunk an `AIMessageChunk` dict whose id is the streamed reply's (the client concatenates the
 * chunks of one id). The reply a streamed task then writes to state is not sent whole again,
 * and the stream's `values` show it under the same id, so a client shows it once — as LangGraph's
 * server does. Ids are kept per stream by the v2 layer's message bookkeeping.
 */
import type { Dict } from "./mapping/json.ts";
import { isRecord } from "./mapping/json.ts";
import { MessageChannel, usageOf, type MessageDeltaEvent } from "./v2/messages.ts";
import type { Namespace } from "./v2/protocol.ts";

/** One `messages` tuple event: its SSE name is given by the caller (`messages`, `messages|ns…`). */
export type TokenTuple = [Dict, Dict];

/** The `messages-tuple` state of one stream: the streamed replies' ids. */
export class TokenTuples {
  private readonly ids = new MessageChannel();
  /** Tool calls sent so far per streamed message (their chunks' `index`). */
  private readonly calls = new Map<string, number>();

  /** The tuple of one model delta, or none (a delta that carries nothing a chunk shows). */
  delta(event: MessageDeltaEvent): TokenTuple[] {
    this.ids.delta(event);
    const id = this.ids.streamingId(event.taskId);
    if (id === undefined) return [];
    const delta = isRecord(event.delta) ? event.delta : {};
    const chunk: Dict = { type: "AIMessageChunk", id, content: "", tool_call_chunks: [] };
    switch (delta["type"]) {
      case "text":
        chunk["content"] = typeof delta["text"] === "string" ? delta["text"] : "";
        break;
      case "reasoning":
        chunk["additional_kwargs"] = {
          reasoning_content: typeof delta["text"] === "string" ? delta["text"] : "",
        };
        break;
      case "tool-call": {
        const call = isRecord(delta["call"]) ? delta["call"] : {};
        if (call["providerExecuted"] === true) return [];
        const index = this.calls.get(id) ?? 0;
        this.calls.set(id, index + 1);
        chunk["tool_call_chunks"] = [
          {
            type: "tool_call_chunk",
            id: call["id"] ?? null,
            name: call["name"] ?? null,
            args: JSON.stringify(call["args"] ?? {}),
            index,
          },
        ];
        break;
      }
      case "usage": {
        const usage = usageOf(delta["usage"]);
        if (!usage) return [];
        chunk["usage_metadata"] = usage;
        break;
      }
      default:
        return [];
    }
    const metadata: Dict = {
      langgraph_node: event.node,
      langgraph_task_id: event.taskId,
      run_id: event.runId,
      ...(event.namespace.length > 0 ? { langgraph_checkpoint_ns: event.namespace.join("|") } : {}),
    };
    return [[chunk, metadata]];
  }

  /** A task ended: its streamed reply, if any, is finished. */
  taskEnded(taskId: string): void {
    this.ids.taskEnded(taskId);
  }

  /** A node's update: its streamed reply is recognised in later updates and values. */
  update(namespace: Namespace, taskId: string, update: unknown): void {
    this.ids.update(namespace, taskId, update);
  }

  /** Whether a message a node wrote is a reply this stream already sent as chunks. */
  streamed(message: unknown): boolean {
    return isRecord(message) && this.ids.streamedIdOf(message) !== undefined;
  }

  /** A state as LangChain dicts, a streamed reply under the id it was streamed with. */
  values(namespace: Namespace, values: Dict): Dict {
    return this.ids.values(namespace, values).values;
  }
}
