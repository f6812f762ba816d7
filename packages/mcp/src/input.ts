/**
 * An MCP server's `input_required` result (protocol revision 2026-07-28, "multi round-trip
 * requests") as Rein interrupts: each form question the server embeds is asked of a person,
 * durably, with the server's schema as the answer's; the answers go back on the next call. A
 * 2025-era server's mid-call `elicitation/create` is asked the same way, one question at a time.
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
  /**
   * Which round of the call this is (1 for the first question); for a 2025-era server, which of
   * the call's questions.
   */
  round: number;
  /** The server's key of this question; `"elicitation"` for a 2025-era server's mid-call one. */
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

/** A form question as the server sent it (an `input_required` entry or a 2025 request). */
interface Question {
  method: string;
  params: { mode?: string; message?: string; requestedSchema?: unknown };
}

/** Where a question sits: its call, its round, the server's key, and the interrupt's key. */
interface Place {
  tool: string;
  args: Record<string, unknown>;
  toolCallId: string;
  round: number;
  key: string;
  /** The interrupt's key, stable across re-runs, so a re-run finds its stored answer. */
  interruptKey: string;
}

/**
 * Asks a person one question as an interrupt (which pauses the run until it is answered) and
 * returns the response the server reads: accepted content, or declined / cancelled.
 *
 * @throws McpToolError when the server asks for something other than a form (sampling, roots,
 *   a URL to open), which a person cannot answer through a Rein interrupt.
 */
export function askOne(
  place: Place,
  question: Question,
): { action: "accept"; content: Record<string, unknown> } | { action: "decline" | "cancel" } {
  const { params } = question;
  if (question.method !== "elicitation/create" || (params.mode ?? "form") !== "form")
    throw new McpToolError(
      place.tool,
      `The server asked for ${question.method === "elicitation/create" ? "a URL to be opened" : question.method}, which Rein cannot answer; only form questions become interrupts.`,
    );
  const requestedSchema = (params.requestedSchema ?? { type: "object" }) as Record<string, unknown>;
  const payload: McpInputRequest = {
    type: "mcp.input_required",
    tool: place.tool,
    args: place.args,
    toolCallId: place.toolCallId,
    round: place.round,
    key: place.key,
    message: params.message ?? "",
    requestedSchema,
  };
  const answer = interrupt<McpInputAnswer>(payload, {
    key: place.interruptKey,
    answer: answerSchema(requestedSchema),
  });
  return refusal.safeParse(answer).success
    ? { action: (answer as { action: "decline" | "cancel" }).action }
    : { action: "accept", content: answer };
}

/**
 * Asks a person each question of `result`, one interrupt per question keyed by the call, the
 * round and the server's key (so a re-run finds its stored answer), and returns the answers for
 * the next call. The first unanswered question pauses the run.
 *
 * @throws McpToolError when the server asks for something other than a form.
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
    const interruptKey = `mcp:${toolCallId}:${round}:${key}`;
    inputResponses[key] = askOne(
      { tool, args, toolCallId, round, key, interruptKey },
      request as Question,
    );
  }
  return {
    inputResponses,
    ...(result.requestState !== undefined ? { requestState: result.requestState } : {}),
  };
}
