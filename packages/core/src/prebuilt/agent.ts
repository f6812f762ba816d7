/**
 * `agent({ model, tools, approve })`: model → tools → model, until the model answers without
 * tool calls. Calls named in `approve` wait for a person, each as its own interrupt.
 */
import { END, START, StateGraph } from "../graph/state-graph.ts";
import type { CompiledGraph, CompileOptions } from "../runtime/compiled.ts";
import { pendingToolCalls, type Model } from "./messages.ts";
import {
  messagesChannel,
  toolNode,
  type ApprovalPolicy,
  type AnyTool,
  type MessagesSchema,
} from "./tool-node.ts";

/** Options of {@link agent}. */
export interface AgentOptions extends CompileOptions {
  model: Model;
  tools: readonly AnyTool[];
  approve?: ApprovalPolicy;
}

/** A compiled tool-calling agent over a `messages` state. */
export function agent(options: AgentOptions): CompiledGraph<MessagesSchema> {
  const { model, tools, approve, ...compile } = options;
  return new StateGraph<MessagesSchema>({ messages: messagesChannel() })
    .addNode("model", async (state) => ({ messages: await model(state.messages) }))
    .addNode("tools", toolNode(tools, approve ? { approve } : {}))
    .addEdge(START, "model")
    .addConditionalEdges(
      "model",
      (state) => (pendingToolCalls(state.messages).length > 0 ? "tools" : END),
      ["tools", END],
    )
    .addEdge("tools", "model")
    .compile({ name: "agent", ...compile });
}
