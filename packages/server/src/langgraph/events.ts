/**
 * Rein's run events as the protocol's SSE events: `values` (with `__interrupt__` when the run
 * paused), `updates` (`{ [node]: update }`, `{ __interrupt__ }`), `messages` tuples
 * (`[message, metadata]`) from the messages a node wrote, `custom`, `tasks`, `checkpoints`,
 * `debug`, `error`. A sub-agent's events are named `mode|ns…` and sent only with
 * `stream_subgraphs`.
 */
import type { RunResult, StreamEvent } from "@rein/core";
import { lgInterrupt, valuesWithInterrupts } from "./mapping/interrupts.ts";
import { messagesOut, toLangChainMessage } from "./mapping/messages.ts";

/** What a stream sends: the modes asked for, and whether sub-agents' events are included. */
export interface LgStreamOptions {
  modes: ReadonlySet<string>;
  subgraphs: boolean;
}

/** One protocol event. */
export interface LgEvent {
  event: string;
  data: unknown;
}

/** The modes of a request (`stream_mode`): LangGraph's default is `values`. */
export function streamModesOf(mode: string | string[] | undefined): Set<string> {
  return new Set(mode === undefined ? ["values"] : Array.isArray(mode) ? mode : [mode]);
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The messages a node's update wrote, as LangChain dicts. */
function messagesOfUpdate(update: unknown): Record<string, unknown>[] {
  if (!isRecord(update)) return [];
  const raw = update["messages"];
  const list = Array.isArray(raw) ? raw : isRecord(raw) ? [raw] : [];
  const shown = messagesOut({ messages: list })["messages"] as unknown[];
  return shown.filter(isRecord).map((m, i) => ("type" in m ? m : toLangChainMessage(m, i)));
}

/** The protocol events of one Rein stream event (none when the options leave it out). */
export function translateEvent(event: StreamEvent, options: LgStreamOptions): LgEvent[] {
  const ns = event.namespace;
  if (ns.length > 0 && !options.subgraphs) return [];
  const name = (mode: string): string => (ns.length === 0 ? mode : `${mode}|${ns.join("|")}`);
  const want = (mode: string): boolean => options.modes.has(mode);
  const out: LgEvent[] = [];
  switch (event.type) {
    case "values":
      if (want("values")) out.push({ event: name("values"), data: messagesOut(event.values) });
      break;
    case "updates": {
      if (want("updates"))
        out.push({ event: name("updates"), data: { [event.node]: event.update } });
      const tuple = want("messages-tuple");
      if (tuple || want("messages"))
        for (const message of messagesOfUpdate(event.update))
          out.push(
            tuple
              ? {
                  event: name("messages"),
                  data: [message, { langgraph_node: event.node, langgraph_task_id: event.taskId }],
                }
              : { event: name("messages/complete"), data: [message] },
          );
      break;
    }
    case "custom":
      if (want("custom")) out.push({ event: name("custom"), data: event.data });
      break;
    case "tasks":
      if (want("tasks"))
        out.push({
          event: name("tasks"),
          data:
            event.phase === "start"
              ? { id: event.taskId, name: event.node, interrupts: [], input: null, triggers: [] }
              : {
                  id: event.taskId,
                  name: event.node,
                  interrupts: [],
                  error: event.outcome === "error" ? "The task failed." : null,
                  result: null,
                },
        });
      break;
    case "checkpoints":
      if (want("checkpoints"))
        out.push({
          event: name("checkpoints"),
          data: {
            next: event.next,
            config: {
              configurable: { checkpoint_id: event.checkpointId, checkpoint_ns: ns.join("|") },
            },
            metadata: { step: event.step },
            tasks: [],
          },
        });
      break;
    case "debug":
      if (want("debug"))
        out.push({
          event: name("debug"),
          data: { type: "debug", payload: { message: event.message, ...event.data } },
        });
      break;
    case "interrupt":
      if (want("updates"))
        out.push({
          event: name("updates"),
          data: { __interrupt__: [lgInterrupt(event.interrupt)] },
        });
      break;
    case "messages":
    case "end":
      break;
  }
  return out;
}

/**
 * The events closing a run: the final `values` with `__interrupt__` when it paused (where
 * LangGraph's server puts the pending questions), or `error` when it failed.
 */
export function closingEvents(result: RunResult, options: LgStreamOptions): LgEvent[] {
  if (result.status === "error")
    return [
      {
        event: "error",
        data: {
          error: result.error?.name ?? "Error",
          message: result.error?.message ?? "The run failed.",
        },
      },
    ];
  if (result.status === "interrupted" && options.modes.has("values"))
    return [
      {
        event: "values",
        data: valuesWithInterrupts(messagesOut(result.values), result.interrupts),
      },
    ];
  return [];
}
