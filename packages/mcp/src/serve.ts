/**
 * A Rein graph served as an MCP tool (protocol revision 2026-07-28, "multi round-trip
 * requests"): a call runs the graph on a thread of its store; while the run is paused on a
 * person, the tool answers `input_required` with one form question per pending interrupt and a
 * signed `requestState` naming the thread and those interrupts; the client's next call carries
 * the answers, which resume exactly those interrupts. The thread lives in the graph's store, so
 * the two calls may reach different server processes.
 */
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import type {
  CallToolResult,
  InputRequest,
  InputRequiredResult,
  McpServer,
  RegisteredTool,
  ServerContext,
  StandardSchemaWithJSON,
  ToolCallback,
} from "@modelcontextprotocol/server";
import {
  Command,
  InvalidInputError,
  ReinError,
  type CompiledGraph,
  type Interrupt,
  type RunResult,
  type Schema,
  type StateOf,
  type UpdateOf,
} from "@rein/core";

/** How a graph becomes an MCP tool: its name and arguments, the key that signs its state. */
export interface GraphToolOptions<S extends Schema, Input extends StandardSchemaWithJSON> {
  /** The tool's name, as clients call it. */
  name: string;
  /** What the tool does, for the client's model. */
  description?: string;
  /** The tool's arguments (a zod object or any Standard Schema with JSON Schema). */
  inputSchema: Input;
  /**
   * The HMAC-SHA256 key that signs each `requestState`, so a client can neither forge the state
   * of another thread nor change which interrupts it answers. Keep it the same across restarts
   * and processes that share the graph's store: a state signed by one verifies in the others.
   */
  secret: string | Uint8Array;
  /** The graph's input for a first call. Default: the arguments as they are. */
  input?: (args: StandardSchemaWithJSON.InferOutput<Input>) => UpdateOf<S>;
  /** The thread a first call runs on. Default: a new random id per call. */
  threadId?: (args: StandardSchemaWithJSON.InferOutput<Input>) => string;
  /**
   * The tool's result once the run is done. Default: the final state as JSON text and as
   * `structuredContent`.
   */
  result?: (run: RunResult<StateOf<S>>) => CallToolResult;
}

/** What a `requestState` carries, signed: the thread and the interrupts the answers are for. */
interface PendingState {
  /** The tool that minted it: a state of one tool is not accepted by another. */
  tool: string;
  thread: string;
  /** The interrupt ids, in the order they were asked. */
  ids: string[];
  /** Interrupts whose answer is not an object, asked as a form with one `value` field. */
  wrapped: string[];
}

/** A tool error: nothing was changed, and the text says what to do. */
function refusal(text: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text }] };
}

function sign(secret: string | Uint8Array, body: string): string {
  return createHmac("sha256", secret).update(body).digest("base64url");
}

/** The signed, opaque state: base64url JSON, a dot, its HMAC. */
function mint(secret: string | Uint8Array, state: PendingState): string {
  const body = Buffer.from(JSON.stringify(state)).toString("base64url");
  return `${body}.${sign(secret, body)}`;
}

/** The state a client echoed back, or `undefined` when it is not one this key signed. */
function verify(
  secret: string | Uint8Array,
  tool: string,
  token: string,
): PendingState | undefined {
  const [body, mac, ...rest] = token.split(".");
  if (!body || !mac || rest.length > 0) return undefined;
  const expected = Buffer.from(sign(secret, body));
  const given = Buffer.from(mac);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  try {
    const state = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as PendingState;
    return state.tool === tool && Array.isArray(state.ids) ? state : undefined;
  } catch {
    return undefined;
  }
}

/** The interrupt's answer schema as stored (JSON Schema), without Rein's own marker key. */
function jsonSchemaOf(stored: unknown): Record<string, unknown> | undefined {
  if (stored === null || typeof stored !== "object") return undefined;
  const { "x-rein-interrupt": _definition, ...json } = stored as Record<string, unknown>;
  return json;
}

/** The question's text: the payload itself when it is text, else its `message`, else its JSON. */
function messageOf(payload: unknown): string {
  if (typeof payload === "string") return payload;
  if (payload && typeof payload === "object") {
    const { message } = payload as { message?: unknown };
    if (typeof message === "string") return message;
  }
  return JSON.stringify(payload);
}

/**
 * One form question per pending interrupt. An object answer schema is the form; any other
 * schema is the one field `value` of the form (MCP forms are flat objects); no schema is an
 * open form whose content is the answer.
 */
function questions(
  pending: readonly Interrupt[],
  schemas: ReadonlyMap<string, unknown>,
): { inputRequests: Record<string, InputRequest>; wrapped: string[] } {
  const inputRequests: Record<string, InputRequest> = {};
  const wrapped: string[] = [];
  for (const ask of pending) {
    const json = jsonSchemaOf(schemas.get(ask.id));
    let requestedSchema: Record<string, unknown> = { type: "object", properties: {} };
    if (json && json.type === "object") requestedSchema = json;
    else if (json) {
      wrapped.push(ask.id);
      requestedSchema = { type: "object", properties: { value: json }, required: ["value"] };
    }
    inputRequests[ask.id] = {
      method: "elicitation/create",
      params: { mode: "form", message: messageOf(ask.payload), requestedSchema },
    } as InputRequest;
  }
  return { inputRequests, wrapped };
}

/** The answers of a retry, by interrupt id; a text saying what is wrong when there are none. */
function answers(state: PendingState, responses: Record<string, unknown> | undefined) {
  const map: Record<string, unknown> = {};
  for (const id of state.ids) {
    const response = responses?.[id] as
      { action?: unknown; content?: Record<string, unknown> } | undefined;
    if (!response) return `No answer to question ${id}; call again with all of them.`;
    if (response.action !== "accept")
      return `Question ${id} was ${response.action === "decline" ? "declined" : response.action === "cancel" ? "cancelled" : "not accepted"}; the run stays paused. Call again with an accepted answer to continue.`;
    const content = response.content ?? {};
    map[id] = state.wrapped.includes(id) ? content.value : content;
  }
  return map;
}

/**
 * Registers `graph` on `server` as the tool `options.name`. A call without `requestState` starts
 * a run on a new thread (`options.threadId`) with the arguments as input; a run that ends is the
 * tool's result (`options.result`; an `error` or `cancelled` run is a tool error). A run paused on
 * interrupts answers `input_required`: one `elicitation/create` form per pending interrupt, keyed
 * by the interrupt's id (the payload, or its `message`, is the question; its answer schema the
 * form), with a `requestState` signed by `options.secret`. The client's next call with that state
 * and `inputResponses` resumes exactly those interrupts (`Command.resumeMap`) and answers again:
 * the result, or another `input_required` if the graph pauses again.
 *
 * A state that is forged, of another tool, already used (its interrupts answered) or answered
 * without every question accepted, or an answer that does not match an interrupt's schema, is a
 * tool error (`isError`) and changes nothing.
 *
 * @throws InvalidInputError when `options.secret` is empty.
 *
 * @example
 * ```ts
 * const server = new McpServer({ name: "refunds", version: "1.0.0" });
 * registerGraphTool(server, refunds, {
 *   name: "refund_order",
 *   inputSchema: z.object({ order: z.string(), amount: z.number() }),
 *   secret: process.env.MCP_STATE_KEY!,
 * });
 * serveStdio(() => server);
 * ```
 */
export function registerGraphTool<S extends Schema, Input extends StandardSchemaWithJSON>(
  server: McpServer,
  graph: CompiledGraph<S>,
  options: GraphToolOptions<S, Input>,
): RegisteredTool {
  const { name, secret } = options;
  // An empty key would sign states anyone can forge: refuse it before the tool is served.
  if (secret.length === 0)
    throw new InvalidInputError(
      `registerGraphTool("${name}") needs a non-empty secret to sign requestState: pass a long random key, the same in every process that shares the graph's store.`,
      { tool: name },
    );
  const result =
    options.result ??
    ((run: RunResult<StateOf<S>>): CallToolResult => ({
      content: [{ type: "text", text: JSON.stringify(run.values) }],
      structuredContent: run.values,
    }));

  /** The tool's answer to a run: its result, an error, or the questions it is paused on. */
  async function answer(run: RunResult<StateOf<S>>): Promise<CallToolResult | InputRequiredResult> {
    if (run.status === "done") return result(run);
    if (run.status !== "interrupted")
      return refusal(
        `The run ${run.status === "error" ? `failed: ${run.error?.message ?? "unknown error"}` : "was cancelled"}.`,
      );
    const page = await graph.listInterrupts({ threadId: run.threadId, status: "pending" });
    const schemas = new Map(page.items.map((item) => [item.id as string, item.answerSchema]));
    const { inputRequests, wrapped } = questions(run.interrupts, schemas);
    const state: PendingState = {
      tool: name,
      thread: run.threadId,
      ids: run.interrupts.map((i) => i.id),
      wrapped,
    };
    return {
      resultType: "input_required",
      inputRequests,
      requestState: mint(secret, state),
    };
  }

  const handler = async (
    args: StandardSchemaWithJSON.InferOutput<Input>,
    ctx: ServerContext,
  ): Promise<CallToolResult | InputRequiredResult> => {
    const token = ctx.mcpReq.requestState<string>();
    try {
      if (token === undefined) {
        const threadId = options.threadId?.(args) ?? randomUUID();
        const input = options.input ? options.input(args) : (args as UpdateOf<S>);
        return await answer(await graph.invoke(input, { threadId }));
      }
      const state = typeof token === "string" ? verify(secret, name, token) : undefined;
      if (!state)
        return refusal(
          `The requestState is not one this tool issued; nothing was changed. Start a new call without it.`,
        );
      const map = answers(state, ctx.mcpReq.inputResponses);
      if (typeof map === "string") return refusal(map);
      return await answer(await graph.invoke(Command.resumeMap(map), { threadId: state.thread }));
    } catch (error) {
      // Rein's own refusals (a stale state, an answer its schema rejects) store nothing.
      if (ReinError.is(error))
        return refusal(`${error.message} (${error.code}); nothing was changed.`);
      throw error;
    }
  };
  return server.registerTool(
    name,
    {
      ...(options.description !== undefined ? { description: options.description } : {}),
      inputSchema: options.inputSchema,
    },
    // The callback type is conditional on the generic schema; the handler is that callback.
    handler as unknown as ToolCallback<Input>,
  );
}
