/**
 * `GET /metrics`: the Prometheus text exposition of this server's metrics, and the hook that
 * counts every answered request by its route pattern (never its URL: thread ids would make a
 * series per thread).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { requireScope, type AuthConfig, type Principal } from "../auth.ts";
import type { ServerContext } from "../context.ts";
import type { ReinMetrics } from "../metrics/recorder.ts";
import { defineRoute } from "./define.ts";

/** The route label of a request no route matched (a 404, a refused URL). */
export const UNMATCHED_ROUTE = "(unmatched)";

const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest();

/**
 * Who may scrape: anyone in open mode; else the `--metrics-token` (compared in constant time),
 * or a token with the `metrics` scope. `admin` does not imply it: metrics count every tenant's
 * approvals, while an admin token sees its own tenant only.
 *
 * @throws UnauthorizedError (from `authenticate`) without a known token; ForbiddenError for a
 *   token without the scope.
 */
export async function checkScrape(
  auth: AuthConfig,
  metricsToken: string | null,
  header: string | undefined,
  authenticate: (header: string | undefined) => Promise<Principal>,
): Promise<void> {
  if (auth.mode === "open") return;
  const bearer = /^Bearer ([^\s]{1,4096})$/.exec(header ?? "")?.[1];
  if (metricsToken !== null && bearer !== undefined) {
    if (timingSafeEqual(digest(bearer), digest(metricsToken))) return;
  }
  requireScope(await authenticate(header), "metrics");
}

/** Counts every answered request (registered before the routes, so it sees them all). */
export function countRequests(app: FastifyInstance, metrics: ReinMetrics): void {
  app.addHook("onResponse", async (request, reply) => {
    metrics.httpRequest(
      request.method,
      request.routeOptions.url ?? UNMATCHED_ROUTE,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
  });
}

/** Registers `GET /metrics`. */
export function registerMetricsRoute(
  app: FastifyInstance,
  ctx: ServerContext,
  metrics: ReinMetrics,
  metricsToken: string | null,
): void {
  defineRoute(
    app,
    ctx,
    {
      method: "GET",
      url: "/metrics",
      operationId: "metrics",
      summary:
        "This process's metrics in the Prometheus text format: pending approvals and their age by tenant and graph, time to decision, answers, escalations, webhook deliveries, runs and HTTP requests (see docs/metrics.md). Open in open mode; with tokens it needs the `--metrics-token` or a token with the `metrics` scope.",
      scope: null,
      checksScope: "metrics",
      contentType: "text/plain; version=0.0.4",
      responses: { 200: z.string() },
    },
    async ({ request, reply }) => {
      await checkScrape(ctx.auth, metricsToken, request.headers.authorization, ctx.authenticate);
      const text = await metrics.render();
      await reply.code(200).header("content-type", metrics.contentType).send(text);
      return undefined;
    },
  );
}
