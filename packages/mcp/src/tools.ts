/**
 * An MCP server's tools as Rein tools: the server's JSON Schema for the arguments (what the model
 * and a reviewer's edits are checked against), an approval policy by name, pattern or predicate,
 * and the call's result — or its error — carried back to the model.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { AnyTool, StandardSchemaV1 } from "@rein/core";
import { z } from "zod";

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

/** The error of a call the server answered with `isError` (its text is what the model reads). */
export class McpToolError extends Error {
  constructor(
    readonly tool: string,
    message: string,
  ) {
    super(message);
    this.name = "McpToolError";
  }
}

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

/** One MCP tool as a Rein tool that calls the server through `client`. */
export function reinTool(
  client: Client,
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
      const result = (await client.callTool(
        { name: tool.name, arguments: args, _meta: { [IDEMPOTENCY_META_KEY]: ctx.idempotencyKey } },
        undefined,
        { signal: ctx.signal },
      )) as CallToolResult;
      // The tool node turns a thrown error into an `error` tool message with this text.
      if (result.isError) throw new McpToolError(tool.name, String(resultValue(result)));
      return resultValue(result);
    },
  };
}
