/**
 * An MCP server's `input_required` result (protocol revision 2026-07-28, "multi round-trip
 * requests") as Rein interrupts: each form question the server embeds is asked of a person,
 * durably, with the server's schema as the answer's; the answers go back on the next call.
 */
import type { InputRequiredResult } from "@modelcontextprotocol/client";
import { interrupt } from "@rein/core";
import { z } from "zod";
import { McpToolError } from "./errors.ts";

/** The payload of the interrupt an MCP tool raises when its server asks for input. */
export interface McpInputRequest {
  type: "mcp.input_required";
  /** The tool that asked. */
  tool: string;
  /** The arguments of the call that asked. */
  args: Record<string, unknown>;
  toolCallId: string;
  /** Which round of the call this is (1 for the first question). */
  round: number;
  /** The server's key of this question. */
  key: string;
  /** What the server asks, for the person. */
  message: string;
  /** JSON Schema of the answer, as the server sent it; an answer must match it. */
  requestedSchema: Record<string, unknown>;
}

/**
 * The answer to an {@link McpInputRequest}: the content the schema describes (the person
 * accepts and fills it in), or `{ action: "decline" }` / `{ action: "cancel" }`.
 */
export type McpInputAnswer = Record<string, unknown> | { action: "decline" | "cancel" };

/** What the next call carries back: the answers by the server's keys, and its state. */
export interface InputAnswers {
  inputResponses: Record<string, unknown>;
  requestState?: string;
}

const refusal = z.strictObject({ action: z.enum(["decline", "cancel"]) });

/** The answer's schema: a refusal, or content matching the server's JSON Schema. */
function answerSchema(requested: Record<string, unknown>): z.ZodType<McpInputAnswer> {
  let content: z.ZodType<Record<string, unknown>>;
  try {
    content = z.fromJSONSchema(requested) as z.ZodType<Record<string, unknown>>;
  } catch {
    content = z.record(z.string(), z.unknown());
  }
  return z.union([refusal, content]);
}

/**
 * Asks a person each question of `result`, one interrupt per question keyed by the call, the
 * round and the server's key (so a re-run finds its stored answer), and returns the answers for
 * the next call. The first unanswered question pauses the run.
 *
 * @throws McpToolError when the server asks for something other than a form (sampling, roots,
 *   a URL to open), which a person cannot answer through a Rein interrupt.
 */
export function askForInput(
  tool: string,
  args: Record<string, unknown>,
  toolCallId: string,
  round: number,
  result: InputRequiredResult,
): InputAnswers {
  const inputResponses: Record<string, unknown> = {};
  const requests = Object.entries(result.inputRequests ?? {}).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  for (const [key, request] of requests) {
    const params = request.params as { mode?: string; message?: string; requestedSchema?: unknown };
    if (request.method !== "elicitation/create" || (params.mode ?? "form") !== "form")
      throw new McpToolError(
        tool,
        `The server asked for ${request.method === "elicitation/create" ? "a URL to be opened" : request.method}, which Rein cannot answer; only form questions become interrupts.`,
      );
    const requestedSchema = (params.requestedSchema ?? { type: "object" }) as Record<
      string,
      unknown
    >;
    const payload: McpInputRequest = {
      type: "mcp.input_required",
      tool,
      args,
      toolCallId,
      round,
      key,
      message: params.message ?? "",
      requestedSchema,
    };
    const answer = interrupt<McpInputAnswer>(payload, {
      key: `mcp:${toolCallId}:${round}:${key}`,
      answer: answerSchema(requestedSchema),
    });
    inputResponses[key] = refusal.safeParse(answer).success
      ? { action: (answer as { action: string }).action }
      : { action: "accept", content: answer };
  }
  return {
    inputResponses,
    ...(result.requestState !== undefined ? { requestState: result.requestState } : {}),
  };
}
