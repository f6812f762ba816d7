/**
 * LangGraph's v2 Agent Server protocol (what `client.threads.stream()` and `@langchain/react`
 * 1.x speak), as one Fastify plugin: `POST /threads/:id/commands` (JSON command in, JSON
 * response out) and `POST /threads/:id/stream/events` (an SSE stream filtered by channels and
 * namespaces). A mapping onto Rein's runs, targeted resumes, steering, state and run tree; see
 * docs/langgraph-protocol-v2.md.
 *
 * @example
 * await app.register(langgraphV2(context), { prefix: "/langgraph" });
 * // client: new Client({ apiUrl: "http://host:port/langgraph" }).threads.stream(threadId, { assistantId })
 */
import type { ThreadId } from "@rein/core";
import { ThreadIdSchema } from "@rein/wire";
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { requireScope, type Principal } from "../../auth.ts";
import type { ServerContext } from "../../context.ts";
import { openTrackedSse } from "../../streaming.ts";
import { loadThread } from "../../thread-access.ts";
import { messagesOut } from "../mapping/messages.ts";
import { bridgeChanges } from "./bridge.ts";
import { COMMANDS } from "./commands.ts";
import { commandErrorOf, ProtocolRefusal } from "./errors.ts";
import { matchesFilter, ThreadEventLogs, type ThreadEventLog } from "./event-log.ts";
import { inputRequested } from "./mapping.ts";
import { CommandEnvelope, EventStreamRequest } from "./schemas.ts";
import type { CommandSuccess, EventFilter } from "./protocol.ts";

/**
 * The caller: `Authorization: Bearer` as everywhere in Rein, or the SDK's `x-api-key` header
 * (the same tokens).
 */
function principalOf(ctx: ServerContext, request: FastifyRequest): Promise<Principal> {
  const key = request.headers["x-api-key"];
  const header =
    request.headers.authorization ??
    (typeof key === "string" && key.length > 0 ? `Bearer ${key}` : undefined);
  return ctx.authenticate(header);
}

/** The thread id of the path, validated. */
function threadIdOf(request: FastifyRequest) {
  const parsed = ThreadIdSchema.safeParse((request.params as { thread_id?: unknown }).thread_id);
  if (!parsed.success)
    throw new ProtocolRefusal(400, "invalid_argument", "The thread id in the path is not valid.");
  return parsed.data;
}

/** Answers a refusal in the protocol's shape; anything else is logged and answered 500. */
async function refuse(
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
  id: number | null,
): Promise<FastifyReply> {
  const { status, body } = commandErrorOf(error, id);
  if (status >= 500) request.log.error({ err: error }, "langgraph v2 request failed");
  return reply.code(status).send(body);
}

/**
 * A stream opened on a thread whose log holds nothing (a thread paused before this process
 * started, or whose events were dropped) replays a snapshot instead: its values, its pending
 * interrupts and, when paused, an `interrupted` lifecycle. Written into the log once, so a client
 * that reopens its stream sees the same event ids and deduplicates them.
 */
async function seed(ctx: ServerContext, log: ThreadEventLog, threadId: ThreadId): Promise<void> {
  if (!log.empty || log.running) return;
  const thread = await ctx.store.getThread(threadId);
  if (!thread) return;
  const graph = await ctx.registry.forThread(ctx.store, thread).catch(() => null);
  if (!graph) return;
  const state = await graph.getState({ threadId: thread.threadId });
  if (!state.checkpointId) return;
  const pending = await ctx.store.getThreadInterrupts(thread.threadId, "pending");
  // Another stream may have seeded it while this one read.
  if (!log.empty || log.running) return;
  log.pending = new Set(pending.map((i) => i.id));
  log.emit("values", [], messagesOut(state.values));
  for (const interrupt of pending) {
    const e = inputRequested(interrupt);
    log.emit(e.method, e.namespace, e.data);
  }
  if (pending.length > 0)
    log.emit("lifecycle", [], { event: "interrupted", graph_name: graph.name });
}

/** `POST /threads/:id/commands`: one command in, its response (or refusal) out. */
function commandsRoute(ctx: ServerContext, logs: ThreadEventLogs) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    let id: number | null = null;
    try {
      const principal = await principalOf(ctx, request);
      const threadId = threadIdOf(request);
      const envelope = CommandEnvelope.safeParse(request.body);
      if (!envelope.success)
        throw new ProtocolRefusal(
          400,
          "invalid_argument",
          "A command is { id: non-negative integer, method: string, params: object }.",
        );
      id = envelope.data.id;
      const handler = COMMANDS[envelope.data.method];
      if (!handler || !Object.hasOwn(COMMANDS, envelope.data.method))
        throw new ProtocolRefusal(
          400,
          "unknown_command",
          `Unknown command "${envelope.data.method.slice(0, 100)}". Known: ${Object.keys(COMMANDS).join(", ")}.`,
        );
      const outcome = await handler({ ctx, logs, principal, threadId }, envelope.data.params);
      const body: CommandSuccess = {
        type: "success",
        id,
        result: outcome.result,
        ...(outcome.appliedThroughSeq !== undefined
          ? { meta: { applied_through_seq: outcome.appliedThroughSeq } }
          : {}),
      };
      return await reply.code(200).send(body);
    } catch (error) {
      return refuse(request, reply, error, id);
    }
  };
}

/**
 * `POST /threads/:id/stream/events`: an SSE stream of the thread's events through the request's
 * filter (the latest run's kept events after `since` first), open until the client leaves.
 */
function streamRoute(ctx: ServerContext, logs: ThreadEventLogs) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    let filter: EventFilter;
    let since = 0;
    let threadId;
    try {
      const principal = await principalOf(ctx, request);
      requireScope(principal, "read");
      threadId = threadIdOf(request);
      const parsed = EventStreamRequest.safeParse(request.body);
      if (!parsed.success)
        throw new ProtocolRefusal(
          400,
          "invalid_argument",
          `The stream request is { channels: [...], namespaces?, depth?, since? }: ${parsed.error.issues[0]?.message ?? "invalid"}.`,
        );
      filter = parsed.data;
      since = parsed.data.since ?? 0;
      await loadThread(ctx.store, principal, threadId);
      await seed(ctx, logs.of(threadId), threadId);
    } catch (error) {
      return refuse(request, reply, error, null);
    }
    const release = logs.hold(threadId);
    const log = logs.of(threadId);
    let unsubscribe: () => void = () => undefined;
    const stream = openTrackedSse(ctx, reply, {}, () => {
      unsubscribe();
      release();
    });
    unsubscribe = log.subscribe(since, (event) => {
      if (matchesFilter(event, filter)) stream.send(event.method, event, event.seq);
    });
    await stream.done;
    return reply;
  };
}

/** The v2 routes, over the server's shared context. */
export function langgraphV2(ctx: ServerContext): FastifyPluginAsync {
  const logs = new ThreadEventLogs();
  return (app: FastifyInstance) => {
    // Answers and runs made through other paths (the console, Slack, the native or legacy API)
    // reach this process's open v2 streams as changes of the pending questions.
    const stopBridge = bridgeChanges(ctx, logs, (error) =>
      app.log.warn({ err: error }, "langgraph v2: a change could not be relayed"),
    );
    app.addHook("onClose", (_instance, done) => {
      stopBridge();
      logs.close();
      done();
    });
    // Errors Fastify raises before a handler runs (a malformed JSON body, a body too large).
    app.setErrorHandler((error, request, reply) => {
      const status = (error as { statusCode?: number }).statusCode;
      if (status !== undefined && status >= 400 && status < 500)
        return reply.code(status).send({
          type: "error",
          id: null,
          error: "invalid_argument",
          message: `The request is malformed: ${String((error as Error).message).slice(0, 300)}`,
        });
      return refuse(request, reply, error, null);
    });
    app.post("/threads/:thread_id/commands", commandsRoute(ctx, logs));
    app.post("/threads/:thread_id/stream/events", streamRoute(ctx, logs));
    return Promise.resolve();
  };
}
