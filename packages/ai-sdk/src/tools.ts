/**
 * AI SDK tools as Rein tools: `tool({ description, inputSchema, execute, needsApproval })` from
 * `ai`, declared the AI SDK way, run by Rein's tool node with Rein's approvals.
 */
import { InvalidInputError, type AnyTool, type StandardSchemaV1 } from "@rein/core";
import { asSchema, type Tool, type ToolSet } from "ai";

/**
 * The tools of an AI SDK `ToolSet` as Rein tools, for `agent({ tools })` or `toolNode()`.
 *
 * - `inputSchema` (zod, `jsonSchema()`, any Standard Schema) gives the JSON Schema the model and
 *   a reviewer's edits are checked against, and validates the arguments before `execute`.
 * - `needsApproval` (a boolean, or a function of the input) makes each call that needs it pause as
 *   its own Rein interrupt with the decision payload; `execute` then runs once, on accept or
 *   edit (with the edited input), behind the tool node's `ctx.once`.
 * - `execute` receives the call id and the run's abort signal. A tool without `execute` (or a
 *   provider-defined tool, which the provider runs) cannot be run by Rein: pass those to
 *   `fromAiSdk(model, { providerTools })` instead.
 *
 * @throws InvalidInputError for a tool without `execute`, or whose JSON Schema is only known
 *   asynchronously.
 *
 * @example
 * const tools = fromAiSdkTools({
 *   send_email: tool({ inputSchema: z.object({ to: z.string() }), needsApproval: true, execute }),
 * });
 * const graph = agent({ model: fromAiSdk(model), tools, checkpointer });
 */
export function fromAiSdkTools(tools: ToolSet, options: AiSdkToolsOptions = {}): AnyTool[] {
  return Object.entries(tools).map(([name, t]) => fromAiSdkTool(name, t, options.context));
}

/** Options of {@link fromAiSdkTools}. */
export interface AiSdkToolsOptions {
  /**
   * The tools' `context` (ai 7): handed to `execute`, `needsApproval` and a description given
   * as a function, as `generateText({ context })` would. Treat it as read-only.
   */
  context?: unknown;
}

/** A description as text: ai 7 allows a function of the tools' context. */
function describe(t: Tool, context: unknown): string | undefined {
  const described: unknown = t.description;
  if (typeof described === "function")
    return (described as (o: { context: unknown }) => string)({ context });
  return described as string | undefined;
}

function fromAiSdkTool(name: string, t: Tool, context: unknown): AnyTool {
  const execute = t.execute;
  if (t.type === "provider" || !execute)
    throw new InvalidInputError(
      `AI SDK tool "${name}" has no execute function${t.type === "provider" ? " (the provider runs it)" : ""}; pass it to fromAiSdk(model, { providerTools }) instead.`,
      { tool: name },
    );
  const schema = asSchema(t.inputSchema);
  const json: unknown = schema.jsonSchema;
  if (typeof (json as PromiseLike<unknown> | null)?.then === "function")
    throw new InvalidInputError(
      `AI SDK tool "${name}": its input schema's JSON Schema is only known asynchronously; pass a zod schema or jsonSchema() with a plain object.`,
      { tool: name },
    );
  const needsApproval = t.needsApproval;
  const description = describe(t, context);
  // ai 7 passes the tools' `context` to each function; ai 6 has none (the field is extra there).
  type ExecuteOptions = Parameters<typeof execute>[1];
  type ApprovalOptions = Parameters<Extract<typeof needsApproval, (...a: never[]) => unknown>>[1];
  return {
    name,
    ...(description !== undefined ? { description } : {}),
    jsonSchema: json as Record<string, unknown>,
    schema: standardOf(schema),
    ...(needsApproval === undefined
      ? {}
      : {
          needsApproval:
            typeof needsApproval === "boolean"
              ? needsApproval
              : async (args: unknown, call: { toolCallId: string }) =>
                  await needsApproval(args, {
                    toolCallId: call.toolCallId,
                    messages: [],
                    context,
                  } as ApprovalOptions),
        }),
    run: async (args: unknown, ctx) =>
      lastValue(
        await execute(args, {
          toolCallId: ctx.toolCallId,
          messages: [],
          abortSignal: ctx.signal,
          context,
        } as ExecuteOptions),
      ),
  };
}

/** The AI SDK schema's validation as a Standard Schema, which the tool node checks with. */
function standardOf(schema: ReturnType<typeof asSchema>): StandardSchemaV1 {
  return {
    "~standard": {
      version: 1,
      vendor: "ai-sdk",
      validate: async (value) => {
        if (!schema.validate) return { value };
        const result = await schema.validate(value);
        return result.success
          ? { value: result.value }
          : { issues: [{ message: result.error.message }] };
      },
    },
  };
}

/** A streaming `execute` yields preliminary results; the last one is the result. */
async function lastValue(output: unknown): Promise<unknown> {
  if (
    typeof (output as Partial<AsyncIterable<unknown>> | null)?.[Symbol.asyncIterator] !== "function"
  )
    return output;
  let last: unknown;
  for await (const value of output as AsyncIterable<unknown>) last = value;
  return last;
}
