/**
 * An MCP server's tools as Rein tools: the server's JSON Schema for the arguments (what the model
 * and a reviewer's edits are checked against), an approval policy by name, pattern or predicate,
 * and the call's result — or its error — carried back to the model.
 */
import {
  isInputRequiredResult,
  type CallToolResult,
  type Client,
  type InputRequiredResult,
  type Tool as McpTool,
} from "@modelcontextprotocol/client";
import type { AnyTool, StandardSchemaV1, ToolContext } from "@rein/core";
import { z } from "zod";
import { McpToolError } from "./errors.ts";
import { askForInput, type InputAnswers } from "./input.ts";

/** A call as an approval predicate sees it. */
export interface McpCall {
  /** The tool's name (as the model sees it). */
  name: string;
  args: Record<string, unknown>;
}

/**
 * Which calls need a person: tool names or patterns (`*` matches any run of characters, so
 * `"delete_*"` matches `delete_ticket`), or a predicate over the call.
 */
export type McpApprovalPolicy = readonly string[] | ((call: McpCall) => boolean);

/** The `_meta` key under which each call carries its idempotency key to the server. */
export const IDEMPOTENCY_META_KEY = "rein.dev/idempotency-key";

/** A pattern with `*` wildcards as an anchored regular expression. */
function patternOf(pattern: string): RegExp {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*");
  return new RegExp(`^${escaped}$`);
}

/** The approval policy as a test of one call. */
export function approvalTest(policy: McpApprovalPolicy | undefined): (call: McpCall) => boolean {
  if (!policy) return () => false;
  if (typeof policy === "function") return policy;
  const patterns = policy.map(patternOf);
  return (call) => patterns.some((p) => p.test(call.name));
}

/**
 * Validates arguments against the server's JSON Schema before the call goes out; a schema zod
 * cannot read is left to the server to check.
 */
function validatorOf(schema: Record<string, unknown>): StandardSchemaV1 | undefined {
  try {
    return z.fromJSONSchema(schema);
  } catch {
    return undefined;
  }
}

/** What a tool result gives the model: structured content, else its text (other parts as JSON). */
function resultValue(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const parts = result.content.map((p) => (p.type === "text" ? p.text : JSON.stringify(p)));
  return parts.join("\n");
}

/** What a Rein tool needs of its connection to call the server. */
export interface McpCallSite {
  client: Client;
  /** Milliseconds one request may take (progress from the server restarts the wait). */
  timeout: number;
  /** The most `input_required` rounds of one call. */
  maxRounds: number;
  /** Resolves once a tool-list refresh the server announced has landed. */
  settled(): Promise<void>;
  /** Registers a call's abort controller, failed when the connection breaks; returns its release. */
  track(controller: AbortController): () => void;
}

/** One request to the server: the call, or its retry carrying the person's answers. */
async function callOnce(
  site: McpCallSite,
  tool: McpTool,
  args: Record<string, unknown>,
  ctx: ToolContext,
  retry: InputAnswers | undefined,
): Promise<CallToolResult | InputRequiredResult> {
  const controller = new AbortController();
  const release = site.track(controller);
  const signal = AbortSignal.any([ctx.signal, controller.signal]);
  try {
    // Protocol revision 2026-07-28: a retry carries `inputResponses` and echoes `requestState`.
    const params = {
      name: tool.name,
      arguments: args,
      _meta: { [IDEMPOTENCY_META_KEY]: ctx.idempotencyKey },
      ...(retry ? { inputResponses: retry.inputResponses } : {}),
      ...(retry?.requestState !== undefined ? { requestState: retry.requestState } : {}),
    };
    const result: CallToolResult | InputRequiredResult = await site.client.callTool(params, {
      signal,
      timeout: site.timeout,
      resetTimeoutOnProgress: true,
      allowInputRequired: true,
    });
    return result;
  } catch (error) {
    // The connection broke mid-call: say so, rather than the bare abort.
    if (controller.signal.aborted && !ctx.signal.aborted) throw controller.signal.reason;
    throw error;
  } finally {
    release();
  }
}

/**
 * One MCP tool as a Rein tool that calls the server through `site`. When the server answers
 * `input_required`, each of its questions becomes a Rein interrupt (the server's schema is the
 * answer's), the run pauses durably, and on the answers the tool is called again with them.
 */
export function reinTool(
  site: McpCallSite,
  tool: McpTool,
  needsApproval: (call: McpCall) => boolean,
): AnyTool {
  const jsonSchema = tool.inputSchema as Record<string, unknown>;
  const schema = validatorOf(jsonSchema);
  return {
    name: tool.name,
    description: tool.description ?? tool.annotations?.title ?? "",
    jsonSchema,
    ...(schema ? { schema } : {}),
    needsApproval: (args: Record<string, unknown>) => needsApproval({ name: tool.name, args }),
    run: async (args: Record<string, unknown>, ctx) => {
      let retry: InputAnswers | undefined;
      for (let round = 1; ; round++) {
        const result = await callOnce(site, tool, args, ctx, retry);
        if (!isInputRequiredResult(result)) {
          // A call that changed the server's tool list returns once the new list is in.
          await site.settled();
          // The tool node turns a thrown error into an `error` tool message with this text.
          if (result.isError) throw new McpToolError(tool.name, String(resultValue(result)));
          return resultValue(result);
        }
        if (round > site.maxRounds)
          throw new McpToolError(
            tool.name,
            `The server asked for input more than ${site.maxRounds} times; raise maxInputRounds if that is expected.`,
          );
        retry = askForInput(tool.name, args, ctx.toolCallId, round, result);
      }
    },
  };
}
