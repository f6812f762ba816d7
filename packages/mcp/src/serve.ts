/**
 * A Rein graph served as an MCP tool (protocol revision 2026-07-28, "multi round-trip
 * requests"): a call runs the graph on a thread of its store; while the run is paused on a
 * person, the tool answers `input_required` with one form question per pending interrupt and a
 * signed `requestState` naming the thread and those interrupts; the client's next call carries
 * the answers, which resume exactly those interrupts. The thread lives in the graph's store, so
 * the two calls may reach different server processes. The caller the transport verified starts
 * the run and answers, so the interrupts' approval policies apply to MCP callers too.
 */
import { createHash, createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import type {
  AuthInfo,
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
  type ApprovalPrincipal,
  type CompiledGraph,
  type Interrupt,
  type RunResult,
  type Schema,
  type StateOf,
  type UpdateOf,
} from "@rein/core";
import { z } from "zod";
import { IDEMPOTENCY_META_KEY } from "./meta.ts";

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
  /**
   * Who is calling: the actor of the run a first call starts (its requester, for four-eyes
   * policies) and the principal every answer is checked with against the interrupt's approval
   * policy. Read it only from what the transport verified, never from the arguments or `_meta`,
   * which the client writes. Default {@link principalFromToken}: the access token the HTTP
   * entry verified (`ctx.http.authInfo`); `undefined` (stdio, or no token) calls as the
   * anonymous actor, whose answers a policy refuses.
   */
  principal?: (
    ctx: ServerContext,
  ) => ApprovalPrincipal | undefined | Promise<ApprovalPrincipal | undefined>;
}

/**
 * The caller of an HTTP request whose bearer token the server verified (`requireBearerAuth` or
 * `verifyBearerToken` of `@modelcontextprotocol/server`, which put it on `ctx.http.authInfo`):
 * the subject is the token's `extra.sub` when the verifier set one (the person), else its
 * `clientId`; `extra.groups` and `extra.roles`, when they are lists of strings, are its groups
 * and roles. No verified token: `undefined`.
 */
export function principalFromToken(authInfo: AuthInfo | undefined): ApprovalPrincipal | undefined {
  if (!authInfo) return undefined;
  const extra = authInfo.extra ?? {};
  const strings = (value: unknown): string[] | undefined =>
    Array.isArray(value) && value.every((v) => typeof v === "string") ? value : undefined;
  const groups = strings(extra.groups);
  const roles = strings(extra.roles);
  return {
    subject: typeof extra.sub === "string" && extra.sub !== "" ? extra.sub : authInfo.clientId,
    ...(groups ? { groups } : {}),
    ...(roles ? { roles } : {}),
  };
}

const nonEmpty = z.string().trim().min(1).max(512);
const principalShape = z.strictObject({
  subject: nonEmpty,
  groups: z.array(nonEmpty).optional(),
  roles: z.array(nonEmpty).optional(),
});

/**
 * The caller as `options.principal` names it, checked: a principal without a subject, or with
 * groups or roles that are not lists of names, would let a policy match the wrong person.
 *
 * @throws InvalidInputError when the resolver returns something that is not a principal.
 */
async function callerOf(
  tool: string,
  resolve: (
    ctx: ServerContext,
  ) => ApprovalPrincipal | undefined | Promise<ApprovalPrincipal | undefined>,
  ctx: ServerContext,
): Promise<ApprovalPrincipal | undefined> {
  const principal = await resolve(ctx);
  if (principal === undefined) return undefined;
  const checked = principalShape.safeParse(principal);
  if (!checked.success)
    throw new InvalidInputError(
      `registerGraphTool("${tool}")'s principal option returned no valid principal (${checked.error.issues.map((i) => `${i.path.join(".") || "principal"}: ${i.message}`).join("; ")}): return { subject, groups?, roles? } with non-empty names, or undefined for an anonymous caller.`,
      { tool },
    );
  return checked.data;
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

/** A hex SHA-256 of values, as JSON: ids that say nothing of what they were made from. */
function digest(values: unknown[]): string {
  return createHash("sha256").update(JSON.stringify(values)).digest("hex").slice(0, 32);
}

/**
 * The request id of a call the client marked with an idempotency key (`_meta`), scoped to the
 * tool, the caller and the `requestState` it carries, so one caller's key never reaches another
 * caller's run; `undefined` without a key.
 */
function replayKey(
  tool: string,
  caller: ApprovalPrincipal | undefined,
  ctx: ServerContext,
  token: unknown,
): string | undefined {
  const key = ctx.mcpReq._meta?.[IDEMPOTENCY_META_KEY];
  if (typeof key !== "string" || key === "") return undefined;
  return `mcp-${digest([tool, caller?.subject ?? null, key, token ?? null])}`;
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

/** The `input_required` answer of a run paused on interrupts: its questions and signed state. */
async function askAgain<S extends Schema>(
  graph: CompiledGraph<S>,
  tool: string,
  secret: string | Uint8Array,
  run: RunResult<StateOf<S>>,
): Promise<InputRequiredResult> {
  const page = await graph.listInterrupts({ threadId: run.threadId, status: "pending" });
  const schemas = new Map(page.items.map((item) => [item.id as string, item.answerSchema]));
  const { inputRequests, wrapped } = questions(run.interrupts, schemas);
  const state: PendingState = {
    tool,
    thread: run.threadId,
    ids: run.interrupts.map((i) => i.id),
    wrapped,
  };
  return { resultType: "input_required", inputRequests, requestState: mint(secret, state) };
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
 * The caller (`options.principal`; by default the subject of the access token the HTTP entry
 * verified) starts the run as its actor and answers as its principal, so an interrupt's approval
 * policy (`approvers`) accepts the approvers it names and refuses everyone else; without a
 * verified caller the tool calls as the anonymous actor, whose answers a policy refuses.
 *
 * A state that is forged, of another tool, already used (its interrupts answered) or answered
 * without every question accepted, an answer that does not match an interrupt's schema, or one
 * the approval policy refuses, is a tool error (`isError`) and changes nothing.
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
  const resolvePrincipal =
    options.principal ?? ((ctx: ServerContext) => principalFromToken(ctx.http?.authInfo));
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
    return await askAgain(graph, name, secret, run);
  }

  const handler = async (
    args: StandardSchemaWithJSON.InferOutput<Input>,
    ctx: ServerContext,
  ): Promise<CallToolResult | InputRequiredResult> => {
    const token = ctx.mcpReq.requestState<string>();
    try {
      const caller = await callerOf(name, resolvePrincipal, ctx);
      // The caller acts (the audit log names them) and answers as themself (policies check it).
      const who = caller ? { actor: caller.subject, principal: caller } : {};
      // A client that re-makes a call after a crash (Rein's does) sends the same idempotency
      // key: the call returns what the first one did, on the same thread, instead of a run.
      const retried = replayKey(name, caller, ctx, token);
      if (token === undefined) {
        const threadId = options.threadId?.(args) ?? retried ?? randomUUID();
        const input = options.input ? options.input(args) : (args as UpdateOf<S>);
        return await answer(
          await graph.invoke(input, {
            threadId,
            ...(caller ? { actor: caller.subject } : {}),
            ...(retried ? { requestId: retried } : {}),
          }),
        );
      }
      const state = typeof token === "string" ? verify(secret, name, token) : undefined;
      if (!state)
        return refusal(
          `The requestState is not one this tool issued; nothing was changed. Start a new call without it.`,
        );
      const map = answers(state, ctx.mcpReq.inputResponses);
      if (typeof map === "string") return refusal(map);
      const request = retried ? `${retried}:${digest([map])}` : undefined;
      return await answer(
        await graph.invoke(Command.resumeMap(map, who), {
          threadId: state.thread,
          ...(request ? { requestId: request } : {}),
        }),
      );
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
