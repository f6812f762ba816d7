/**
 * Rein's run events as the protocol's SSE events: `values` (with `__interrupt__` when the run
 * paused), `updates` (`{ [node]: update }`, `{ __interrupt__ }`), `messages` tuples
 * (`[message, metadata]`) from the messages a node wrote and, for a run that streams tokens, a
 * model's deltas as chunks ({@link TokenTuples}), `custom`, `tasks`, `checkpoints`, `debug`,
 * `error`. A sub-agent's events are named `mode|ns…` and sent only with
 * `stream_subgraphs`.
 */
import type { RunResult, StreamEvent } from "@rein/core";
import { lgInterrupt, valuesWithInterrupts } from "./mapping/interrupts.ts";
import { isRecord } from "./mapping/json.ts";
import { messagesOut, toLangChainMessage } from "./mapping/messages.ts";
import type { TokenTuples } from "./tokens.ts";

/** What a stream sends: the modes asked for, and whether sub-agents' events are included. */
export interface LgStreamOptions {
  modes: ReadonlySet<string>;
  subgraphs: boolean;
}

/** Whether a stream sends a model's tokens (`messages-tuple`): its run must stream them. */
export function wantsTokens(modes: ReadonlySet<string>): boolean {
  return modes.has("messages-tuple");
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

/** The messages a node's update wrote, as LangChain dicts, but those `skip` leaves out. */
function messagesOfUpdate(
  update: unknown,
  skip: (message: unknown) => boolean = () => false,
): Record<string, unknown>[] {
  if (!isRecord(update)) return [];
  const raw = update["messages"];
  const list = (Array.isArray(raw) ? raw : isRecord(raw) ? [raw] : []).filter((m) => !skip(m));
  const shown = messagesOut({ messages: list })["messages"] as unknown[];
  return shown.filter(isRecord).map((m, i) => ("type" in m ? m : toLangChainMessage(m, i)));
}

/** The SSE event name of a mode's event at a namespace: `mode`, or `mode|ns…` below the root. */
function eventName(mode: string, ns: readonly string[]): string {
  return ns.length === 0 ? mode : `${mode}|${ns.join("|")}`;
}

/** The events of a node's update: the update itself, and the messages it wrote. */
function updateEvents(
  event: Extract<StreamEvent, { type: "updates" }>,
  options: LgStreamOptions,
  tokens: TokenTuples | undefined,
): LgEvent[] {
  const ns = event.namespace;
  const modes = options.modes;
  const out: LgEvent[] = [];
  if (modes.has("updates"))
    out.push({ event: eventName("updates", ns), data: { [event.node]: event.update } });
  tokens?.update(ns, event.taskId, event.update);
  const tuple = modes.has("messages-tuple");
  if (!tuple && !modes.has("messages")) return out;
  // A reply whose tokens were sent is not sent again whole (LangGraph sends a message once).
  const skip = tokens ? (m: unknown) => tokens.streamed(m) : undefined;
  for (const message of messagesOfUpdate(event.update, skip))
    out.push(
      tuple
        ? {
            event: eventName("messages", ns),
            data: [message, { langgraph_node: event.node, langgraph_task_id: event.taskId }],
          }
        : { event: eventName("messages/complete", ns), data: [message] },
    );
  return out;
}

/**
 * The protocol events of one Rein stream event (none when the options leave it out). `tokens`:
 * the stream's `messages-tuple` state, for a run that streams a model's deltas.
 */
export function translateEvent(
  event: StreamEvent,
  options: LgStreamOptions,
  tokens?: TokenTuples,
): LgEvent[] {
  const ns = event.namespace;
  if (ns.length > 0 && !options.subgraphs) return [];
  // A module function, not a closure made per event: this runs for every event of every stream.
  const name = eventName;
  const modes = options.modes;
  const out: LgEvent[] = [];
  switch (event.type) {
    case "values":
      if (modes.has("values"))
        out.push({
          event: name("values", ns),
          data: tokens ? tokens.values(ns, event.values) : messagesOut(event.values),
        });
      break;
    case "updates":
      out.push(...updateEvents(event, options, tokens));
      break;
    case "custom":
      if (modes.has("custom")) out.push({ event: name("custom", ns), data: event.data });
      break;
    case "tasks":
      if (event.phase === "end") tokens?.taskEnded(event.taskId);
      if (modes.has("tasks"))
        out.push({
          event: name("tasks", ns),
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
      if (modes.has("checkpoints"))
        out.push({
          event: name("checkpoints", ns),
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
      if (modes.has("debug"))
        out.push({
          event: name("debug", ns),
          data: { type: "debug", payload: { message: event.message, ...event.data } },
        });
      break;
    case "interrupt":
      if (modes.has("updates"))
        out.push({
          event: name("updates", ns),
          data: { __interrupt__: [lgInterrupt(event.interrupt)] },
        });
      break;
    case "messages":
      if (tokens && modes.has("messages-tuple"))
        for (const tuple of tokens.delta(event))
          out.push({ event: name("messages", ns), data: tuple });
      break;
    case "end":
      break;
  }
  return out;
}

/**
 * The events closing a run: the final `values` with `__interrupt__` when it paused (where
 * LangGraph's server puts the pending questions), or `error` when it failed.
 */
export function closingEvents(
  result: RunResult,
  options: LgStreamOptions,
  tokens?: TokenTuples,
): LgEvent[] {
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
        data: valuesWithInterrupts(
          tokens ? tokens.values([], result.values) : messagesOut(result.values),
          result.interrupts,
        ),
      },
    ];
  return [];
}
