/**
 * `toolNode(tools, { approve })`: runs the tool calls of the last model message in parallel.
 * Calls that need approval each raise their own interrupt (keyed by the tool call id), so a
 * reviewer can accept one call, edit another's arguments, answer a third in the tool's place or
 * ignore it. Only accepted and edited calls execute, each exactly once, behind an idempotency key.
 */
import { z } from "zod";
import { append, type Channel } from "../channels.ts";
import { InvalidInputError } from "../errors.ts";
import type { NodeFn } from "../api/state-graph.ts";
import type { TaskContext } from "../graph/node.ts";
import type { ApproversSpec } from "../graph/node.ts";
import { ladderOf, type DefinedLadder } from "../interrupts/define.ts";
import { planLadder } from "../interrupts/ladder.ts";
import { GraphInterrupt } from "../interrupts/calls.ts";
import { traceToolCall } from "./agent-spans.ts";
import {
  approvalRequestFor,
  pendingToolCalls,
  type Message,
  type ToolCall,
  type ToolMessage,
  type ToolReview,
  type ToolSpec,
  type ToolStatus,
} from "./messages.ts";
import {
  argsJsonSchema,
  validateStandard,
  zodFromJsonSchema,
  type StandardSchemaV1,
} from "./schema.ts";
import { toolCallContext, type DecisionContext } from "./decision-context.ts";
import { steeringMessages } from "./steering.ts";

/** What a tool's code receives besides its arguments. */
export interface ToolContext {
  /** Stable per (thread, task, tool call): hand it to the external API as its idempotency key. */
  idempotencyKey: string;
  signal: AbortSignal;
  /** The model's id of this call. */
  toolCallId: string;
}

/** A tool the model can call, defined once for every adapter. */
export interface Tool<Args = Record<string, unknown>> {
  name: string;
  description?: string;
  /**
   * Validates (and types) the arguments before the tool runs: any Standard Schema (a zod 4
   * object schema works as is). Its JSON Schema is what the model and the approval check see.
   */
  schema?: StandardSchemaV1<unknown, Args>;
  /** JSON Schema of the arguments, for schema libraries without a JSON Schema converter. */
  jsonSchema?: Record<string, unknown>;
  /**
   * Whether a call needs a person, beside the node's `approve` policy: `true`, or a function of
   * the call's arguments (the AI SDK's `needsApproval`). A call that needs one pauses as its own
   * interrupt with the decision payload, like a call the policy names.
   */
  needsApproval?:
    boolean | ((args: Args, call: { toolCallId: string }) => boolean | Promise<boolean>);
  /**
   * The call's effect cannot be undone (money paid out, an email sent): its decision payload says
   * `irreversible: true`, and the console asks for an explicit confirmation before accepting.
   */
  irreversible?: boolean;
  /** Runs the call; may return a promise. */
  run(args: Args, ctx: ToolContext): unknown;
}

/** Any tool, whatever its argument type (what {@link toolNode} and `agent` accept). */
export interface AnyTool {
  name: string;
  description?: string;
  schema?: StandardSchemaV1;
  jsonSchema?: Record<string, unknown>;
  needsApproval?:
    boolean | ((args: never, call: { toolCallId: string }) => boolean | Promise<boolean>);
  irreversible?: boolean;
  run(args: never, ctx: ToolContext): unknown;
}

/**
 * The tools of an agent or tool node: a list, or a function returning the current list, or a
 * promise of it (an MCP server's tools: they change while the graph lives, and the first list
 * comes once the server is reached). The function is asked at every model and tool step; return
 * the same array while nothing changed, so its derived schemas are reused.
 */
export type ToolList =
  readonly AnyTool[] | (() => readonly AnyTool[] | Promise<readonly AnyTool[]>);

/** Reads a {@link ToolList}, deriving `derive(list)` once per distinct array. */
export function toolListReader<T>(
  tools: ToolList,
  derive: (list: readonly AnyTool[]) => T,
): () => Promise<T> {
  if (typeof tools !== "function") {
    const fixed = Promise.resolve(derive(tools));
    return () => fixed;
  }
  let seen: readonly AnyTool[] | undefined;
  let derived: T | undefined;
  return async () => {
    const list = await tools();
    if (list !== seen || derived === undefined) {
      derived = derive(list);
      seen = list;
    }
    return derived;
  };
}

/** Builds a {@link Tool} with typed arguments. */
export function tool<Args>(definition: Tool<Args>): Tool<Args> {
  return definition;
}

/**
 * Refuses a value that is not a Rein tool (no `run` function), such as an AI SDK or LangChain
 * tool passed with a cast: it would be offered to the model, then fail when its call is run.
 *
 * @throws InvalidInputError naming the tool and the adapter that converts it.
 */
function assertReinTool(t: AnyTool, index: number): void {
  if (typeof (t as Partial<AnyTool> | null)?.run === "function") return;
  const name = typeof t?.name === "string" ? `"${t.name}"` : `at index ${index}`;
  throw new InvalidInputError(
    `Tool ${name} is not a Rein tool: it has no run function. Convert AI SDK tools with fromAiSdkTools() from @rein/ai-sdk (and write others with tool() from @rein/core).`,
    { tool: typeof t?.name === "string" ? t.name : null, index },
  );
}

/** The tools as the model sees them: name, description, JSON Schema of the arguments. */
export function toolSpecs(tools: readonly AnyTool[]): ToolSpec[] {
  tools.forEach(assertReinTool);
  return tools.map((t) => ({
    name: t.name,
    description: t.description ?? "",
    parameters: argsJsonSchema(t.schema, t.jsonSchema, t.name),
  }));
}

/** The interrupt payload of a call awaiting approval (SPEC's decision convention). */
export interface ToolDecisionRequest {
  action: string;
  args: Record<string, unknown>;
  description: string;
  allow: { accept: boolean; edit: boolean; respond: boolean; ignore: boolean };
  toolCallId: string;
  /** JSON Schema an edit's `args` must match (an edit that does not is refused). */
  argsSchema: Record<string, unknown>;
  /**
   * Set when the provider runs the call itself and asked for this approval: the answer goes back
   * to the provider (approved, or denied with the reason), and its arguments cannot be edited.
   */
  providerApprovalId?: string;
  /** Why the agent asks and the conversation that led to the call. */
  context: DecisionContext;
  /** Set when the tool declares its effect cannot be undone. */
  irreversible?: true;
}

/** A reviewer's answer to a {@link ToolDecisionRequest}. */
export type ToolDecision =
  | { type: "accept" }
  | { type: "edit"; args: Record<string, unknown> }
  | { type: "respond"; message: string }
  | { type: "ignore"; reason?: string };

/** Schema of {@link ToolDecision}: a malformed decision is refused before it is stored. */
export const toolDecisionSchema: z.ZodType<ToolDecision> = decisionSchema(
  z.record(z.string(), z.unknown()),
);

function decisionSchema(args: z.ZodType): z.ZodType<ToolDecision> {
  return z.discriminatedUnion("type", [
    z.object({ type: z.literal("accept") }),
    z.object({ type: z.literal("edit"), args }),
    z.object({ type: z.literal("respond"), message: z.string() }),
    z.object({ type: z.literal("ignore"), reason: z.string().optional() }),
  ]) as z.ZodType<ToolDecision>;
}

/** A provider's approval takes no edit: the provider runs the call with its own arguments. */
const providerDecisionSchema: z.ZodType<ToolDecision> = z.discriminatedUnion("type", [
  z.object({ type: z.literal("accept") }),
  z.object({ type: z.literal("respond"), message: z.string() }),
  z.object({ type: z.literal("ignore"), reason: z.string().optional() }),
]);

/**
 * Which calls need a person: tool names, a predicate over the call, or tool name → `true` or
 * `{ approvers }` (who may decide that tool's calls; the spec sees the decision payload, so a
 * rule reads the arguments at `args.<name>`).
 *
 * @example { refund: { approvers: { when: { path: "args.amount", gt: 1000 }, then: { groups: ["finance"], count: 2 } } } }
 */
export type ApprovalPolicy =
  readonly string[] | ((call: ToolCall) => boolean) | Readonly<Record<string, true | ToolApproval>>;

/**
 * How one tool's calls are approved (the record form of {@link ApprovalPolicy}): who may decide,
 * and the deadline and escalation ladder of each call's question (see `interrupt`'s `remind`,
 * `escalate`, `timeout` and `onTimeout`; `onTimeout` is the decision applied at the deadline).
 *
 * @example { refund: { approvers: { groups: ["support"] }, remind: "1h", escalate: { after: "4h", approvers: { groups: ["managers"] } }, timeout: "1d", onTimeout: { type: "ignore", reason: "no answer" } } }
 */
export interface ToolApproval extends DefinedLadder<ToolDecision> {
  /** Who may decide, and how many must agree (see `interrupt`'s `approvers`). */
  approvers?: ApproversSpec<ToolDecisionRequest>;
}

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

async function needsApproval(
  policy: ApprovalPolicy | undefined,
  tool: AnyTool,
  call: ToolCall,
): Promise<boolean> {
  if (policy && (typeof policy === "function" ? policy(call) : named(policy, call.name)))
    return true;
  const own = tool.needsApproval as
    boolean | ((args: unknown, call: { toolCallId: string }) => boolean | Promise<boolean>);
  return typeof own === "function" ? await own(call.args, { toolCallId: call.id }) : own === true;
}

/** Whether a list or record policy names the tool. */
function named(policy: Exclude<ApprovalPolicy, (call: ToolCall) => boolean>, name: string) {
  return isToolList(policy) ? policy.includes(name) : Object.hasOwn(policy, name);
}

function isToolList(policy: object): policy is readonly string[] {
  return Array.isArray(policy);
}

/** The approval options (approvers, ladder) the record form of a policy gives a tool's calls. */
function approvalOf(policy: ApprovalPolicy | undefined, name: string): ToolApproval | undefined {
  if (!policy || typeof policy === "function" || isToolList(policy)) return undefined;
  const entry = Object.hasOwn(policy, name) ? policy[name] : undefined;
  return entry === true || entry === undefined ? undefined : entry;
}

/** Refuses a malformed per-tool ladder when the node is built, not when a call first asks. */
function checkLadders(policy: ApprovalPolicy | undefined): void {
  if (!policy || typeof policy === "function" || isToolList(policy)) return;
  for (const entry of Object.values(policy)) if (entry !== true) planLadder(entry, new Date());
}

/** The tool message of a declined call: the reviewer's reason, when given. */
function declined(reason: string | undefined): string {
  return reason ? `The reviewer declined this call: ${reason}` : "The reviewer declined this call.";
}

function toolMessage(
  call: ToolCall,
  content: unknown,
  status: ToolStatus,
  extra: {
    args?: Record<string, unknown>;
    review?: ToolReview;
    approval?: ToolMessage["approval"];
  } = {},
): ToolMessage {
  return {
    role: "tool",
    toolCallId: call.id,
    name: call.name,
    status,
    content: typeof content === "string" ? content : JSON.stringify(content),
    ...extra,
  };
}

/** A tool with what the node derives from it once. */
interface PreparedTool {
  tool: AnyTool;
  argsSchema: Record<string, unknown>;
  decision: z.ZodType<ToolDecision>;
}

function prepare(t: AnyTool, index: number): PreparedTool {
  assertReinTool(t, index);
  const argsSchema = argsJsonSchema(t.schema, t.jsonSchema, t.name);
  // The edit's arguments are checked against the tool's JSON Schema by the resume path, before
  // the answer is stored: a reviewer's typo is refused and the interrupt stays pending.
  return { tool: t, argsSchema, decision: decisionSchema(zodFromJsonSchema(argsSchema)) };
}

/**
 * A node that runs the last assistant message's tool calls in parallel and appends one tool
 * message per call, in call order, then any steering given with the answers (marked messages).
 *
 * @throws InvalidLadderError when a tool's approval ladder is out of order (see `ToolApproval`).
 */
export function toolNode(tools: ToolList, options: ToolNodeOptions = {}): NodeFn<MessagesSchema> {
  checkLadders(options.approve);
  const prepared = toolListReader(
    tools,
    (list) => new Map(list.map((t, i) => [t.name, prepare(t, i)])),
  );
  return async (state, ctx) => {
    const byName = await prepared();
    const calls = pendingToolCalls(state.messages);
    const approvals = new Map(
      calls.flatMap((c) => {
        const request = approvalRequestFor(state.messages, c);
        return request ? [[c.id, request.approvalId] as const] : [];
      }),
    );
    // allSettled, not all: every call reaches its own interrupt (or finishes) before the node
    // unwinds, so each pending approval is recorded as its own interrupt.
    const settled = await Promise.allSettled(
      calls.map((call) =>
        traceToolCall(ctx, call, () => {
          const approvalId = approvals.get(call.id);
          return approvalId === undefined
            ? runCall(call, byName, options, ctx, state.messages)
            : providerApproval(call, approvalId, ctx, state.messages);
        }),
      ),
    );
    const paused = settled.find(
      (s): s is PromiseRejectedResult =>
        s.status === "rejected" && s.reason instanceof GraphInterrupt,
    );
    if (paused) throw paused.reason as GraphInterrupt;
    const results = settled.map((s, i) =>
      s.status === "fulfilled"
        ? s.value
        : toolMessage(
            calls[i] as ToolCall,
            s.reason instanceof Error ? s.reason.message : String(s.reason),
            "error",
          ),
    );
    return { messages: [...results, ...steeringMessages(ctx.steering, state.messages)] };
  };
}

async function runCall(
  call: ToolCall,
  byName: Map<string, PreparedTool>,
  options: ToolNodeOptions,
  ctx: TaskContext<MessagesSchema>,
  messages: readonly Message[],
): Promise<ToolMessage> {
  const found = byName.get(call.name);
  if (!found) return toolMessage(call, `Unknown tool "${call.name}".`, "error");
  let args = call.args;
  let review: ToolReview | undefined;
  if (await needsApproval(options.approve, found.tool, call)) {
    const t = found.tool;
    const request: ToolDecisionRequest = {
      action: call.name,
      args: call.args,
      description: t.description ?? "",
      allow: { accept: true, edit: true, respond: true, ignore: true },
      toolCallId: call.id,
      argsSchema: found.argsSchema,
      context: toolCallContext(messages, call.id, `The agent asks to run ${call.name}.`),
      ...(t.irreversible === true ? { irreversible: true as const } : {}),
    };
    const approval = approvalOf(options.approve, call.name);
    const { decision, review: reviewed } = await ask(ctx, call, request, found.decision, approval);
    review = reviewed;
    if (decision.type === "respond")
      return toolMessage(call, decision.message, "responded", { review });
    if (decision.type === "ignore")
      return toolMessage(call, declined(decision.reason), "ignored", { review });
    if (decision.type === "edit") {
      args = decision.args;
      review.originalArgs = call.args;
    }
  }
  const extra = { args, ...(review ? { review } : {}) };
  let parsed: unknown = args;
  if (found.tool.schema) {
    // Constraints JSON Schema cannot express (refinements) are checked here, at run time.
    const checked = await validateStandard(found.tool.schema, args);
    if (!checked.ok)
      return toolMessage(
        call,
        `Arguments of ${call.name} are invalid: ${checked.text}`,
        "error",
        extra,
      );
    parsed = checked.value;
  }
  const key = ctx.idempotencyKey(`tool:${call.id}`);
  const result = await ctx.once(`tool:${call.id}`, () =>
    found.tool.run(parsed as never, {
      idempotencyKey: key,
      signal: ctx.signal,
      toolCallId: call.id,
    }),
  );
  return toolMessage(call, result ?? null, "done", extra);
}

function describeCall(call: ToolCall, description: string | undefined): string {
  return `${call.name}(${JSON.stringify(call.args)})${description ? `: ${description}` : ""}`;
}

/** Raises the call's approval interrupt (keyed by the call id) and returns the decision. */
async function ask(
  ctx: TaskContext<MessagesSchema>,
  call: ToolCall,
  request: ToolDecisionRequest,
  answer: z.ZodType<ToolDecision>,
  approval?: ToolApproval,
): Promise<{ decision: ToolDecision; review: ToolReview }> {
  const approvers = approval?.approvers;
  await Promise.resolve(); // let sibling calls reach their interrupts in the same turn
  let answeredBy: { interruptId: string; actor: string | null } = { interruptId: "", actor: null };
  const decision = ctx.interrupt<ToolDecision>(request, {
    key: call.id,
    answer,
    onAnswer: (info) => (answeredBy = info),
    ...(approvers ? { approvers: approvers as ApproversSpec } : {}),
    ...(approval ? ladderOf(approval) : {}),
  });
  const review: ToolReview = {
    decision: decision.type,
    actor: answeredBy.actor,
    interruptId: answeredBy.interruptId,
  };
  return { decision, review };
}

/**
 * A call the provider runs itself asked for approval: a person decides, and the answer goes
 * back to the provider as the tool message's `approval` (approved, or denied with the reason).
 * Rein runs nothing.
 */
async function providerApproval(
  call: ToolCall,
  approvalId: string,
  ctx: TaskContext<MessagesSchema>,
  messages: readonly Message[],
): Promise<ToolMessage> {
  const request: ToolDecisionRequest = {
    action: call.name,
    args: call.args,
    description: `${describeCall(call, undefined)}: run by the model provider once approved`,
    context: toolCallContext(
      messages,
      call.id,
      `The model provider asks to run ${call.name} itself.`,
    ),
    allow: { accept: true, edit: false, respond: true, ignore: true },
    toolCallId: call.id,
    argsSchema: { type: "object" },
    providerApprovalId: approvalId,
  };
  const { decision, review } = await ask(ctx, call, request, providerDecisionSchema);
  if (decision.type === "accept")
    return toolMessage(call, "Approved by the reviewer.", "approved", {
      review,
      approval: { approvalId, approved: true },
    });
  const reason =
    decision.type === "respond"
      ? decision.message
      : declined(decision.type === "ignore" ? decision.reason : undefined);
  return toolMessage(call, reason, decision.type === "respond" ? "responded" : "ignored", {
    review,
    approval: { approvalId, approved: false, reason },
  });
}
