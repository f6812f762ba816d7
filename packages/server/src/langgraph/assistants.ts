/**
 * The protocol's read-only assistant routes (the served graphs), `GET /info`, and the SDK's
 * routes Rein does not serve, each answering 501 with the feature it names.
 */
import { END, START } from "@rein/core";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { ServerContext } from "../context.ts";
import { NotServedError, lgRoute, parseWith } from "./http.ts";
import { assistantOf, graphOfAssistant, type LgAssistant } from "./mapping/assistants.ts";

const AssistantPath = z.object({ assistant_id: z.string().min(1).max(256) }).loose();

const SearchBody = z
  .object({
    graph_id: z.string().max(256).nullable().optional(),
    name: z.string().max(256).nullable().optional(),
    metadata: z.record(z.string(), z.unknown()).nullable().optional(),
    limit: z.number().int().min(1).max(1000).optional(),
    offset: z.number().int().min(0).optional(),
  })
  .loose();

/** The assistants a search body selects. */
function searchAssistants(ctx: ServerContext, body: z.infer<typeof SearchBody>): LgAssistant[] {
  return ctx.registry
    .names()
    .map(assistantOf)
    .filter(
      (a) =>
        (!body.graph_id || a.graph_id === body.graph_id) &&
        (!body.name || a.name.includes(body.name)) &&
        Object.entries(body.metadata ?? {}).every(
          ([k, v]) => JSON.stringify(a.metadata[k]) === JSON.stringify(v),
        ),
    );
}

/** The drawing of a graph: its nodes and plain edges (routers are marked conditional). */
function graphDrawing(ctx: ServerContext, name: string) {
  const definition = ctx.registry.get(name).definition;
  const id = (node: string): string =>
    node === START ? "__start__" : node === END ? "__end__" : node;
  const nodes = [START, ...definition.nodes.keys(), END].map((node) => ({
    id: id(node),
    name: id(node),
    data: id(node),
  }));
  const edges: { source: string; target: string; conditional: boolean }[] = [];
  for (const [source, targets] of definition.edges)
    for (const target of targets)
      edges.push({ source: id(source), target: id(target), conditional: false });
  for (const [source, branches] of definition.branches)
    for (const branch of branches)
      for (const target of Object.values(branch.pathMap ?? {}))
        edges.push({ source: id(source), target: id(target), conditional: true });
  return { nodes, edges };
}

/** The schemas of a graph: its channels as an object schema (Rein's channels carry no JSON Schema). */
function graphSchemas(ctx: ServerContext, name: string) {
  const channels = Object.keys(ctx.registry.get(name).definition.schema);
  const state = {
    title: name,
    type: "object",
    properties: Object.fromEntries(channels.map((c) => [c, {}])),
  };
  return {
    graph_id: name,
    input_schema: state,
    output_schema: state,
    state_schema: state,
    config_schema: null,
    context_schema: null,
  };
}

/** The SDK's routes Rein does not serve, with what each is and why. */
const NOT_SERVED: readonly [
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  url: string,
  feature: string,
  why: string,
][] = [
  [
    "POST",
    "/assistants",
    "Creating assistants",
    "assistants are the graphs the server runs (--graphs).",
  ],
  [
    "PATCH",
    "/assistants/:assistant_id",
    "Updating assistants",
    "assistants are the graphs the server runs (--graphs).",
  ],
  [
    "DELETE",
    "/assistants/:assistant_id",
    "Deleting assistants",
    "assistants are the graphs the server runs (--graphs).",
  ],
  [
    "POST",
    "/assistants/:assistant_id/versions",
    "Assistant versions",
    "a graph is versioned with its deployment.",
  ],
  [
    "POST",
    "/assistants/:assistant_id/latest",
    "Assistant versions",
    "a graph is versioned with its deployment.",
  ],
  ["PUT", "/store/items", "The long-term store", "keep long-term memory in your own database."],
  ["GET", "/store/items", "The long-term store", "keep long-term memory in your own database."],
  ["DELETE", "/store/items", "The long-term store", "keep long-term memory in your own database."],
  [
    "POST",
    "/store/items/search",
    "The long-term store",
    "keep long-term memory in your own database.",
  ],
  [
    "POST",
    "/store/namespaces",
    "The long-term store",
    "keep long-term memory in your own database.",
  ],
  [
    "POST",
    "/threads/:thread_id/runs/crons",
    "Crons",
    "schedule runs with your own scheduler calling POST /threads/{id}/runs.",
  ],
  ["POST", "/runs/crons", "Crons", "schedule runs with your own scheduler calling POST /runs."],
  ["PATCH", "/runs/crons/:cron_id", "Crons", "schedule runs with your own scheduler."],
  ["DELETE", "/runs/crons/:cron_id", "Crons", "schedule runs with your own scheduler."],
  ["POST", "/runs/crons/search", "Crons", "schedule runs with your own scheduler."],
  ["POST", "/runs/crons/count", "Crons", "schedule runs with your own scheduler."],
  ["POST", "/runs/batch", "Batches of stateless runs", "send one POST /runs per run."],
  [
    "POST",
    "/runs/cancel",
    "Cancelling many runs",
    "cancel each with POST /threads/{id}/runs/{run_id}/cancel.",
  ],
  ["POST", "/threads/prune", "Pruning threads", "delete each with DELETE /threads/{id}."],
  [
    "PATCH",
    "/threads/:thread_id/state",
    "Editing checkpoint metadata",
    "Rein's checkpoints are immutable; write state with POST /threads/{id}/state.",
  ],
  [
    "GET",
    "/threads/:thread_id/stream",
    "Joining a thread's stream",
    "join a run's stream with GET /threads/{id}/runs/{run_id}/stream.",
  ],
  [
    "GET",
    "/runs/:run_id/stream",
    "Joining a stateless run's stream",
    "stream it as it starts (POST /runs/stream).",
  ],
  ["POST", "/ui/:assistant_id", "Generative UI components", "Rein graphs ship no UI bundles."],
];

/** Registers `/info`, the assistant routes and the 501 answers of routes not served. */
export function registerLgAssistantRoutes(
  app: FastifyInstance,
  ctx: ServerContext,
  version: string,
): void {
  lgRoute(app, ctx, "GET", "/info", null, () => ({
    version,
    langgraph_js_version: null,
    flags: { assistants: true, crons: false, langsmith: false, langsmith_tracing_replicas: false },
    host: { kind: "rein", project_id: null, revision_id: null },
    metadata: { server: "rein", strict_resume: true, graphs: ctx.registry.names() },
  }));

  lgRoute(app, ctx, "POST", "/assistants/search", "read", ({ request }) => {
    const body = parseWith(SearchBody, request.body, "body");
    const offset = body.offset ?? 0;
    return searchAssistants(ctx, body).slice(offset, offset + (body.limit ?? 10));
  });

  lgRoute(
    app,
    ctx,
    "POST",
    "/assistants/count",
    "read",
    ({ request }) => searchAssistants(ctx, parseWith(SearchBody, request.body, "body")).length,
  );

  const graphOf = (params: unknown): string =>
    graphOfAssistant(ctx.registry, parseWith(AssistantPath, params, "path").assistant_id);

  lgRoute(app, ctx, "GET", "/assistants/:assistant_id", "read", ({ request }) =>
    assistantOf(graphOf(request.params)),
  );
  lgRoute(app, ctx, "GET", "/assistants/:assistant_id/graph", "read", ({ request }) =>
    graphDrawing(ctx, graphOf(request.params)),
  );
  lgRoute(app, ctx, "GET", "/assistants/:assistant_id/schemas", "read", ({ request }) =>
    graphSchemas(ctx, graphOf(request.params)),
  );
  lgRoute(app, ctx, "GET", "/assistants/:assistant_id/subgraphs", "read", ({ request }) => {
    graphOf(request.params);
    return {};
  });
  lgRoute(
    app,
    ctx,
    "GET",
    "/assistants/:assistant_id/subgraphs/:namespace",
    "read",
    ({ request }) => {
      graphOf(request.params);
      return {};
    },
  );

  for (const [method, url, feature, why] of NOT_SERVED)
    lgRoute(app, ctx, method, url, null, () => {
      throw new NotServedError(feature, why);
    });
}
