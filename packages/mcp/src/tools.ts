/**
 * An MCP server's tools as Rein tools: the server's JSON Schema for the arguments (what the model
 * and a reviewer's edits are checked against), an approval policy by name, pattern or predicate,
 * and the call's result — or its error — carried back to the model.
 */
import {
  isInputRequiredResult,
  type CallToolResult,
  type Client,
  type ElicitRequest,
  type ElicitResult,
  type InputRequiredResult,
  type Tool as McpTool,
} from "@modelcontextprotocol/client";
import type { AnyTool, StandardSchemaV1, ToolContext } from "@rein/core";
import { z } from "zod";
import { McpToolError } from "./errors.ts";
import { askForInput, askOne, type InputAnswers } from "./input.ts";
import { IDEMPOTENCY_META_KEY } from "./meta.ts";

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
  /**
   * Takes the questions a 2025-era server sends mid-call (`elicitation/create`) while this call
   * is in flight; returns its release.
   */
  onElicit(asked: (request: ElicitRequest) => Promise<ElicitResult>): () => void;
}

/** A 2025-era server's question, waiting for the tool's run to answer it. */
interface Elicitation {
  request: ElicitRequest;
  reply: (result: ElicitResult) => void;
}

/**
 * Waits for the call while answering the questions a 2025-era server sends during it, each in
 * the tool's own run (where an interrupt pauses the run): a stored answer goes back at once; a
 * question not answered yet pauses the run, and the call is cancelled (the server hears
 * `cancel`). After the answer the tool is called again from the start, and the server's same
 * question, asked again, finds it. `asked` counts the questions across the tool's calls.
 */
async function answering<T>(
  call: Promise<T>,
  questions: Elicitation[],
  arrived: { wake?: () => void },
  ask: (request: ElicitRequest) => ElicitResult,
  cancel: (reason: unknown) => void,
): Promise<T> {
  const outcome = call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  for (;;) {
    const next = questions.shift();
    if (next) {
      try {
        next.reply(ask(next.request));
      } catch (error) {
        // The call is cancelled first, so the server stops it before it reads the reply.
        cancel(error);
        next.reply({ action: "cancel" });
        throw error;
      }
      continue;
    }
    const woken = new Promise<"question">((resolve) => (arrived.wake = () => resolve("question")));
    const settled = await Promise.race([outcome, woken]);
    if (settled === "question") continue;
    if ("error" in settled) throw settled.error;
    return settled.value;
  }
}

/** One request to the server: the call, or its retry carrying the person's answers. */
async function callOnce(
  site: McpCallSite,
  tool: McpTool,
  args: Record<string, unknown>,
  ctx: ToolContext,
  retry: InputAnswers | undefined,
  asked: { count: number },
): Promise<CallToolResult | InputRequiredResult> {
  const controller = new AbortController();
  const release = site.track(controller);
  const signal = AbortSignal.any([ctx.signal, controller.signal]);
  const questions: Elicitation[] = [];
  const arrived: { wake?: () => void } = {};
  // The transport hands the question over; the run answers it (an interrupt needs the run).
  const stopAsking = site.onElicit(
    (request) =>
      new Promise<ElicitResult>((reply) => {
        questions.push({ request, reply });
        arrived.wake?.();
      }),
  );
  try {
    // Protocol revision 2026-07-28: a retry carries `inputResponses` and echoes `requestState`.
    const params = {
      name: tool.name,
      arguments: args,
      _meta: { [IDEMPOTENCY_META_KEY]: ctx.idempotencyKey },
      ...(retry ? { inputResponses: retry.inputResponses } : {}),
      ...(retry?.requestState !== undefined ? { requestState: retry.requestState } : {}),
    };
    const call = site.client.callTool(params, {
      signal,
      timeout: site.timeout,
      resetTimeoutOnProgress: true,
      allowInputRequired: true,
    });
    const ask = (request: ElicitRequest): ElicitResult => {
      const n = ++asked.count;
      return askOne(
        {
          tool: tool.name,
          args,
          toolCallId: ctx.toolCallId,
          round: n,
          key: "elicitation",
          interruptKey: `mcp:${ctx.toolCallId}:elicitation:${n}`,
        },
        request,
      ) as ElicitResult;
    };
    const result: CallToolResult | InputRequiredResult = await answering(
      call,
      questions,
      arrived,
      ask,
      (reason) => controller.abort(reason),
    );
    return result;
  } catch (error) {
    // The connection broke mid-call: say so, rather than the bare abort.
    if (controller.signal.aborted && !ctx.signal.aborted) throw controller.signal.reason;
    throw error;
  } finally {
    stopAsking();
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
      // 2025-era questions asked so far in this run of the tool (each its own interrupt).
      const asked = { count: 0 };
      for (let round = 1; ; round++) {
        const result = await callOnce(site, tool, args, ctx, retry, asked);
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
