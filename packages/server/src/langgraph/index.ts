/**
 * LangGraph's Agent Server protocol (the legacy REST and SSE routes of
 * `@langchain/langgraph-sdk` 1.15) served over Rein: a Fastify plugin registered under
 * {@link LANGGRAPH_PREFIX}, so LangGraph clients and UIs (agent-chat-ui, Agent Inbox,
 * `useStream`) take `http://host:port/langgraph` as their `apiUrl`. A mapping onto Rein's own
 * operations, not a second runtime: assistants are the served graphs, answers are Rein answers
 * (targeted, refused when ambiguous or stale), threads keep their tenant. See
 * docs/langgraph-protocol.md.
 */
import type { FastifyInstance } from "fastify";
import type { ServerContext } from "../context.ts";
import { registerLgAssistantRoutes } from "./assistants.ts";
import { installErrorHandling } from "./http.ts";
import { registerLgRunRoutes } from "./runs.ts";
import { registerLgThreadRoutes } from "./threads.ts";

/** The path prefix of the protocol's routes: clients use `<server>/langgraph` as `apiUrl`. */
export const LANGGRAPH_PREFIX = "/langgraph";

/** The version `GET /langgraph/info` reports. */
const VERSION = "rein-0.1.0";

/**
 * Registers the protocol's routes under {@link LANGGRAPH_PREFIX} as an encapsulated plugin (its
 * error answers carry LangGraph's `detail` without changing the native API's).
 */
export async function registerLangGraph(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  await app.register(
    (scope, _options, done) => {
      installErrorHandling(scope, ctx);
      registerLgAssistantRoutes(scope, ctx, VERSION);
      registerLgThreadRoutes(scope, ctx);
      registerLgRunRoutes(scope, ctx);
      done();
    },
    { prefix: LANGGRAPH_PREFIX },
  );
}
