/**
 * `subAgent(graph, { input, output })`: a node that runs a compiled graph as a child run with
 * its own conversation, and hands the parent only what the child declares as its output.
 */
import type { Schema, StateOf, UpdateOf } from "../channels.ts";
import type { NodeFn } from "../api/state-graph.ts";
import type { CompiledGraph } from "../api/compiled.ts";
import type { TaskContext } from "../graph/node.ts";
import { textOf, type Message } from "./messages.ts";

/** How a parent talks to a sub-agent: what goes in, what comes back. */
export interface SubAgentOptions<P extends Schema, C extends Schema> {
  /** The child's input, built from the parent's state (the child sees nothing else). */
  input(state: StateOf<P>, ctx: TaskContext<P>): UpdateOf<C>;
  /** The parent's update, built from the child's final state (its summary or declared output). */
  output(values: StateOf<C>): UpdateOf<P>;
}

/**
 * A node running `graph` as a sub-agent: a child run (deterministic id, its own checkpoints,
 * resumable and steerable on its own) whose conversation stays in the child. The parent's state
 * receives only `output(childValues)`, so two sub-agents' messages never interleave.
 *
 * @example
 * .addNode("refund", subAgent(refundAgent, {
 *   input: (s) => ({ messages: [{ role: "user", content: s.ticket }] }),
 *   output: (v) => ({ refund: lastAssistantText(v.messages) }),
 * }))
 */
export function subAgent<P extends Schema, C extends Schema>(
  graph: CompiledGraph<C>,
  options: SubAgentOptions<P, C>,
): NodeFn<P> {
  return async (state, ctx) => {
    // Invoked from node code without a thread id: the runtime runs it as a child run of this
    // task, and a paused child pauses this task (the call throws; nothing to catch here).
    const result = await graph.invoke(options.input(state, ctx));
    if (result.status !== "done") return {};
    return options.output(result.values);
  };
}

/** The text of the last assistant message: the usual summary of an agent sub-run. */
export function lastAssistantText(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as Message;
    if (m.role === "assistant") return textOf(m);
  }
  return "";
}
