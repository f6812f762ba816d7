/**
 * Builds the server: checks the store against the features turned on, then composes the Fastify
 * app of the feature plugins (plugins/), each declaring what it depends on and decorates. Shutdown
 * is the plugins' own `preClose` and `onClose` hooks, run by Fastify in the order registered.
 */
import { InvalidInputError } from "@rein/core";
import Fastify, { type FastifyInstance } from "fastify";
import { servableStore } from "./capabilities.ts";
import type { ServerContext } from "./context.ts";
import { apiPlugin } from "./plugins/api.ts";
import { consolePlugin } from "./plugins/console.ts";
import { contextPlugin } from "./plugins/context.ts";
import { governancePlugin } from "./plugins/governance.ts";
import { fastifyOptions, httpPlugin } from "./plugins/http.ts";
import { langgraphPlugin } from "./plugins/langgraph.ts";
import { metricsPlugin, serverMetrics } from "./plugins/metrics.ts";
import { notificationsPlugin } from "./plugins/notifications.ts";
import type { ServerOptions } from "./plugins/options.ts";
import { backgroundPlugin, deadlinesPlugin } from "./plugins/work.ts";

export type { MetricsOptions, ServerOptions } from "./plugins/options.ts";

/** A built server. */
export interface ReinServer {
  app: FastifyInstance;
  context: ServerContext;
  /** Listens and returns the base URL. */
  listen(options: { port?: number; host?: string }): Promise<string>;
  /** Stops accepting requests, drains running work, closes SSE streams. Does not close the store. */
  close(): Promise<void>;
}

/**
 * Builds the server (not yet listening).
 *
 * @example
 * const server = await createServer({ store, graphs, auth: openAuth() });
 * const url = await server.listen({ port: 8080, host: "127.0.0.1" });
 *
 * @throws {MissingCapabilityError} when a turned-on feature needs a capability the store lacks.
 * @throws {InvalidInputError} for a concurrency below 1 without scale-out.
 */
export async function createServer(options: ServerOptions): Promise<ReinServer> {
  const served = servableStore(options.store, options);
  if ((options.concurrency ?? 4) < 1 && !options.scale)
    throw new InvalidInputError(
      "A server without scale-out executes its background runs itself: concurrency must be at least 1.",
    );
  const bodyLimit = options.bodyLimit ?? 1024 * 1024;
  const app = Fastify(fastifyOptions(bodyLimit, options.logger ?? false));
  const wired = serverMetrics(served, options);
  // The order matters: the context and the HTTP shell first (every route needs them), the
  // work-executing plugins last, so their shutdown hooks run after the others'.
  await app.register(contextPlugin, { server: options, served, wired });
  await app.register(httpPlugin, { bodyLimit, corsOrigins: options.corsOrigins ?? [] });
  if (wired)
    await app.register(metricsPlugin, {
      wired,
      token: options.metrics ? (options.metrics.token ?? null) : null,
    });
  await app.register(apiPlugin);
  await app.register(governancePlugin);
  await app.register(notificationsPlugin, {
    served,
    delivery: options.webhookDelivery,
    notifiers: options.notifiers ?? [],
    slack: options.slack,
    links: options.links ?? null,
    onAttempt: wired?.onAttempt,
  });
  if (options.langgraph !== false) await app.register(langgraphPlugin);
  if (options.consoleDir !== undefined)
    await app.register(consolePlugin, { dir: options.consoleDir });
  if (options.deadlines !== false) await app.register(deadlinesPlugin);
  await app.register(backgroundPlugin, { drainMs: options.drainMs ?? 30_000 });
  await app.ready();
  return {
    app,
    context: app.rein,
    async listen({ port = 0, host = "127.0.0.1" }) {
      const address = await app.listen({ port, host });
      return address.replace("[::1]", "127.0.0.1");
    },
    async close() {
      await app.close();
    },
  };
}
