/**
 * `toolNode(tools, { approve })`: runs the tool calls of the last model message in parallel.
 * Calls that need approval each raise their own interrupt (keyed by the tool call id), so a
 * reviewer can accept one call, edit another's arguments, answer a third in the tool's place or
 * ignore it. Only accepted and edited calls execute, each exactly once, behind an idempotency key.
 */
import { z } from "zod";
import { append, type Channel } from "../channels.ts";
import { InvalidInputError } from "../errors.ts";
import type { NodeFn } from "../graph/state-graph.ts";
import { GraphInterrupt, type NodeContext } from "../runtime/context.ts";
import { pendingToolCalls, type Message, type ToolCall, type ToolStatus } from "./messages.ts";

/** What a tool's code receives besides its arguments. */
export interface ToolContext {
  /** Stable per (thread, task, tool call): hand it to the external API as its idempotency key. */
  idempotencyKey: string;
  signal: AbortSignal;
}

/** A tool the model can call. */
export interface Tool<Args = Record<string, unknown>> {
  name: string;
  description?: string;
  /** Validates (and types) the arguments before the tool runs. */
  schema?: z.ZodType<Args>;
  /** Runs the call; may return a promise. */
  run(args: Args, ctx: ToolContext): unknown;
}

/** Any tool, whatever its argument type (what {@link toolNode} and `agent` accept). */
export interface AnyTool {
  name: string;
  description?: string;
  schema?: z.ZodType;
  run(args: never, ctx: ToolContext): unknown;
}

/** Builds a {@link Tool} with typed arguments. */
export function tool<Args>(definition: Tool<Args>): Tool<Args> {
  return definition;
}

/** The interrupt payload of a call awaiting approval (SPEC's decision convention). */
export interface ToolDecisionRequest {
  action: string;
  args: Record<string, unknown>;
  description: string;
  allow: { accept: boolean; edit: boolean; respond: boolean; ignore: boolean };
  toolCallId: string;
}

/** A reviewer's answer to a {@link ToolDecisionRequest}. */
export type ToolDecision =
  | { type: "accept" }
  | { type: "edit"; args: Record<string, unknown> }
  | { type: "respond"; message: string }
  | { type: "ignore" };

/** Schema of {@link ToolDecision}: a malformed decision is refused before it is stored. */
export const toolDecisionSchema: z.ZodType<ToolDecision> = z.discriminatedUnion("type", [
  z.object({ type: z.literal("accept") }),
  z.object({ type: z.literal("edit"), args: z.record(z.string(), z.unknown()) }),
  z.object({ type: z.literal("respond"), message: z.string() }),
  z.object({ type: z.literal("ignore") }),
]);

/** Which calls need a person: tool names, or a predicate over the call. */
export type ApprovalPolicy = readonly string[] | ((call: ToolCall) => boolean);

/** Options of {@link toolNode}. */
export interface ToolNodeOptions {
  approve?: ApprovalPolicy;
}

/** The state a tool node works on: a message list. */
export type MessagesSchema = { messages: Channel<Message[], Message | Message[]> };

/** A `messages` channel for agent graphs. */
export function messagesChannel(): Channel<Message[], Message | Message[]> {
  return append<Message>();
}

function needsApproval(policy: ApprovalPolicy | undefined, call: ToolCall): boolean {
  if (!policy) return false;
  return typeof policy === "function" ? policy(call) : policy.includes(call.name);
}

function toolMessage(call: ToolCall, content: unknown, status: ToolStatus): Message {
  return {
    role: "tool",
    toolCallId: call.id,
    name: call.name,
    status,
    content: typeof content === "string" ? content : JSON.stringify(content),
  };
}

/**
 * A node that runs the last assistant message's tool calls in parallel and appends one tool
 * message per call, in call order.
 */
export function toolNode(
  tools: readonly AnyTool[],
  options: ToolNodeOptions = {},
): NodeFn<MessagesSchema> {
  const byName = new Map(tools.map((t) => [t.name, t]));
  return async (state, ctx) => {
    const calls = pendingToolCalls(state.messages);
    // allSettled, not all: every call reaches its own interrupt (or finishes) before the node
    // unwinds, so each pending approval is recorded as its own interrupt.
    const settled = await Promise.allSettled(
      calls.map((call) => runCall(call, byName, options, ctx)),
    );
    const paused = settled.find(
      (s): s is PromiseRejectedResult =>
        s.status === "rejected" && s.reason instanceof GraphInterrupt,
    );
    if (paused) throw paused.reason as GraphInterrupt;
    return {
      messages: settled.map((s, i) =>
        s.status === "fulfilled"
          ? s.value
          : toolMessage(
              calls[i] as ToolCall,
              s.reason instanceof Error ? s.reason.message : String(s.reason),
              "error",
            ),
      ),
    };
  };
}

async function runCall(
  call: ToolCall,
  byName: Map<string, AnyTool>,
  options: ToolNodeOptions,
  ctx: NodeContext<MessagesSchema>,
): Promise<Message> {
  const found = byName.get(call.name);
  if (!found) return toolMessage(call, `Unknown tool "${call.name}".`, "error");
  let args = call.args;
  if (needsApproval(options.approve, call)) {
    const request: ToolDecisionRequest = {
      action: call.name,
      args: call.args,
      description: `${call.name}(${JSON.stringify(call.args)})${found.description ? `: ${found.description}` : ""}`,
      allow: { accept: true, edit: true, respond: true, ignore: true },
      toolCallId: call.id,
    };
    await Promise.resolve(); // let sibling calls reach their interrupts in the same turn
    const decision = ctx.interrupt<ToolDecision>(request, {
      key: call.id,
      answer: toolDecisionSchema,
    });
    if (decision.type === "respond") return toolMessage(call, decision.message, "responded");
    if (decision.type === "ignore")
      return toolMessage(call, "The reviewer declined this call.", "ignored");
    if (decision.type === "edit") args = decision.args;
  }
  const parsed = found.schema
    ? found.schema.safeParse(args)
    : { success: true as const, data: args };
  if (!parsed.success)
    throw new InvalidInputError(
      `Arguments of ${call.name} are invalid: ${z.prettifyError(parsed.error)}`,
    );
  const key = ctx.idempotencyKey(`tool:${call.id}`);
  const result = await ctx.once(`tool:${call.id}`, () =>
    found.run(parsed.data as never, { idempotencyKey: key, signal: ctx.signal }),
  );
  return toolMessage(call, result ?? null, "done");
}
