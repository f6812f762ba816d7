/**
 * `agent({ model, tools, approve })`: model → tools → model, until the model answers without
 * tool calls. Calls named in `approve` wait for a person, each as its own interrupt.
 */
import { END, START, StateGraph } from "../api/state-graph.ts";
import type { CompiledGraph } from "../api/compiled.ts";
import type { CompileOptions } from "../graph/options.ts";
import { currentTask } from "../engine/context.ts";
import { traceModelCall } from "./agent-spans.ts";
import { callModel } from "./model-call.ts";
import { modelView, pendingToolCalls, type Message, type Model } from "./messages.ts";
import { steeringMessages } from "./steering.ts";
import {
  messagesChannel,
  toolNode,
  toolSpecs,
  type ApprovalPolicy,
  toolListReader,
  type MessagesSchema,
  type ToolList,
} from "./tool-node.ts";

/** Options of {@link agent}. */
export interface AgentOptions extends CompileOptions {
  /** Any function from messages (and tools, signal) to a message or a delta stream. */
  model: Model;
  /** The tools, or a function returning the current list (e.g. an MCP server's, which change). */
  tools: ToolList;
  approve?: ApprovalPolicy;
  /** A system message sent first on every model call (not stored in the conversation). */
  system?: string;
}

/**
 * A compiled tool-calling agent over a `messages` state.
 *
 * The model receives the conversation as {@link modelView} shows it (tool calls carry the
 * arguments that actually ran), the tools' JSON Schemas and the run's abort signal. Steering
 * recorded for the run or its tasks is added as marked user messages before the call.
 *
 * @example
 * const graph = agent({ model: fromAiSdk(openai("gpt-4o")), tools: [refund], approve: ["refund"], checkpointer });
 */
export function agent(options: AgentOptions): CompiledGraph<MessagesSchema> {
  const { model, tools, approve, system, ...compile } = options;
  const specs = toolListReader(tools, toolSpecs);
  return new StateGraph<MessagesSchema>({ messages: messagesChannel() })
    .addNode("model", async (state, ctx) => {
      const steering = steeringMessages(ctx.steering, state.messages);
      const view = modelView([...state.messages, ...steering]);
      const input: Message[] = system ? [{ role: "system", content: system }, ...view] : view;
      const task = currentTask();
      const tools = await specs();
      const reply = await traceModelCall(ctx, () =>
        callModel(
          model,
          input,
          { tools, signal: ctx.signal },
          task ? (delta) => task.emitMessage(delta) : undefined,
        ),
      );
      return { messages: [...steering, reply] };
    })
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
