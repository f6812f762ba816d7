/**
 * `GET /healthz` (liveness), `GET /readyz` (readiness) and `GET /openapi.json`: no token needed.
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { ServerContext } from "../context.ts";
import { buildOpenApi } from "../openapi.ts";
import { defineRoute } from "./define.ts";
import { HealthSchema, ReadinessSchema } from "@rein/wire";

/** Registers the meta routes. */
export function registerMetaRoutes(app: FastifyInstance, ctx: ServerContext): void {
  defineRoute(
    app,
    ctx,
    {
      method: "GET",
      url: "/healthz",
      operationId: "health",
      summary:
        "Liveness: the store kind, the registered graphs, and whether the server asks for a token (`auth`: `token` or `open`).",
      scope: null,
      responses: { 200: HealthSchema },
    },
    () =>
      Promise.resolve({
        status: 200,
        body: {
          ok: true,
          store: ctx.storeKind,
          graphs: ctx.registry.names(),
          auth: ctx.auth.mode === "open" ? "open" : "token",
        },
      }),
  );
  defineRoute(
    app,
    ctx,
    {
      method: "GET",
      url: "/readyz",
      operationId: "readiness",
      summary:
        "Readiness: 200 when the store answers a round trip, its migrations are applied, on Postgres the LISTEN connection is up, and the server is not shutting down; else 503 with the reason. Checks only, no data.",
      scope: null,
      responses: { 200: ReadinessSchema, 503: ReadinessSchema },
    },
    async () => {
      const body = await ctx.ready();
      return body.ready ? { status: 200, body } : { status: 503, body };
    },
  );
  let document: Record<string, unknown> | null = null;
  defineRoute(
    app,
    ctx,
    {
      method: "GET",
      url: "/openapi.json",
      operationId: "openapi",
      summary: "This API's OpenAPI 3.1 document.",
      scope: null,
      responses: { 200: z.record(z.string(), z.unknown()) },
    },
    () => Promise.resolve({ status: 200 as const, body: (document ??= buildOpenApi(ctx.routes)) }),
  );
}
