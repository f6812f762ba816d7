/**
 * Builds the Fastify app: error mapping, body limits, CORS, logging, routes, the deadline timers
 * and graceful shutdown.
 */
import {
  InvalidInputError,
  NotFoundError,
  ReinError,
  type ApproversSpec,
  type InterruptId,
  type RuntimeStore,
  type ThreadId,
} from "@rein/core";
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyServerOptions,
} from "fastify";
import { deadlineIntervalFromEnv } from "./deadline-interval.ts";
import { servableStore } from "./capabilities.ts";
import { STATUS_CODES, maxHeaderSize } from "node:http";
import type { Duplex } from "node:stream";
import type { AuthConfig } from "./auth.ts";
import type { ServerContext } from "./context.ts";
import {
  HeadersTooLargeError,
  PayloadTooLargeError,
  RequestTimeoutError,
  reinErrorResponse,
  retryableCodes,
} from "./errors.ts";
import { GraphRegistry, type GraphFactory } from "./registry.ts";
import { registerDecisionRoutes } from "./routes/decisions.ts";
import { registerAuditRoutes } from "./routes/audit.ts";
import { registerInterruptRoutes } from "./routes/interrupts.ts";
import { registerMetaRoutes } from "./routes/meta.ts";
import { registerRunRoutes } from "./routes/runs.ts";
import { registerThreadRoutes } from "./routes/threads.ts";
import { registerWhoamiRoute } from "./routes/whoami.ts";
import { registerConsole } from "./console.ts";
import { BackgroundRuns } from "./background.ts";
import { registerWebhookRoutes } from "./routes/webhooks.ts";
import { registerSlackRoutes } from "./routes/slack.ts";
import { parseSlackConfig, type SlackOptions } from "./notify/slack-config.ts";
import { registerLinkRoutes } from "./routes/links.ts";
import type { LinkSettings } from "./notify/config.ts";
import type { Notifier } from "./notify/notifier.ts";
import {
  DEFAULT_DELIVERY,
  WebhookDeliveryLoop,
  type WebhookDeliverySettings,
} from "./webhooks/delivery.ts";
import { webhookBackendOf } from "./webhooks/store.ts";
import { wireMetrics } from "./metrics/wiring.ts";
import { countRequests, registerMetricsRoute } from "./routes/metrics.ts";
import { RunManager } from "./run-manager.ts";
import { LANGGRAPH_PREFIX, registerLangGraph } from "./langgraph/index.ts";
import { relayFanout, type ScaleOut } from "./scale/index.ts";
import { readiness } from "./readiness.ts";
import { latestMetadata } from "./thread-access.ts";
import { toWireJson } from "./wire.ts";
import { langgraphV2 } from "./langgraph/v2/index.ts";

/** Options of {@link createServer}. */
export interface ServerOptions {
  /**
   * The store. Besides the runtime store it must declare the capabilities of the features turned
   * on (see `featureNeeds`): a store that lacks one is refused at start with one line.
   */
  store: RuntimeStore;
  /** Reported by `/healthz`. Default `"custom"`. */
  storeKind?: string;
  /** Graphs by name (what a `--graphs` module exports). */
  graphs: Record<string, GraphFactory>;
  /** Tokens, or open mode. */
  auth: AuthConfig;
  /**
   * Default approvers per graph name (`--policies FILE`): who may answer the questions a graph
   * raises without approvers of their own. See docs/governance.md.
   */
  policies?: Record<string, ApproversSpec>;
  /** Largest accepted request body in bytes. Default 1 MiB. */
  bodyLimit?: number;
  /** Origins allowed to call from a browser. Default none: CORS closed. */
  corsOrigins?: string[];
  /** Fastify's pino logger options, or false. Default false. */
  logger?: FastifyServerOptions["logger"];
  /** SSE keep-alive interval. Default 15 s. */
  pingMs?: number;
  /** How often the interrupt feed re-reads the queue. Default 2 s. */
  queuePollMs?: number;
  /** How long shutdown waits for running work before aborting it. Default 30 s. */
  drainMs?: number;
  /** Run the graphs' deadline timers in this process. Default true. */
  deadlines?: boolean;
  /**
   * Continue the runs a crashed process left running (a sweep at start and every quarter of the
   * lease TTL, on every server and worker). Default true.
   */
  recover?: boolean;
  /**
   * Lease TTL of every graph served, in ms (`REIN_LEASE_TTL_MS` in the CLI): how long a dead
   * process holds a thread before another takes its run over. Default: each graph's own (30 s
   * unless compiled otherwise).
   */
  leaseTtlMs?: number;
  /**
   * Background runs this process executes at once. Default 4. With 0 (Postgres only) it accepts runs and other processes execute them.
   */
  concurrency?: number;
  /**
   * Directory of the built approval console (`@rein/console`'s `consoleDir`), served at `/`.
   * Default: no console. Ignored when the directory holds no `index.html`.
   */
  consoleDir?: string;
  /**
   * The HMAC key of the audit log's signed heads (`REIN_AUDIT_KEY` or `--audit-key` in the CLI).
   * Given, `GET /audit/verify` checks each chain against its signed head (finding a deleted tail)
   * and signs the heads it verified. Default: none. See docs/audit.md.
   */
  auditKey?: string;
  /**
   * Scale-out on Postgres (see `startScaleOut`): run events, queue wake-ups and cancel requests
   * travel between the processes over LISTEN/NOTIFY.
   */
  scale?: ScaleOut;
  /**
   * The webhook delivery loop's pacing (`REIN_WEBHOOK_*` in the CLI), or `false` to leave
   * delivery to other processes. Default: on, with {@link DEFAULT_DELIVERY}. The `/webhooks`
   * routes exist on every store Rein ships.
   */
  webhookDelivery?: WebhookDeliverySettings | false;
  /**
   * Slack (the `slack` section of `--notify FILE`): given, `POST /slack/interactivity` takes
   * Approve / Reject clicks, signed by Slack, as the mapped people. See docs/slack.md.
   */
  slack?: SlackOptions;
  /**
   * Notifiers (email, Slack) this process's delivery loop hands `notify:<kind>` subscriptions'
   * events to (`--notify FILE` in the CLI). See docs/notifications.md.
   */
  notifiers?: Notifier[];
  /**
   * How decision links are signed and where they point. Given, `/links/<token>` serves them and
   * `POST /interrupts/:id/links` mints them; without, minting answers `links_not_configured`.
   */
  links?: LinkSettings | null;
  /**
   * Metrics: `GET /metrics` (Prometheus text) and the OpenTelemetry instruments of
   * `metrics.getMeter("rein")`, or `false` for neither. Default: on, with no extra token. See
   * docs/metrics.md.
   */
  metrics?: MetricsOptions | false;
  /**
   * LangGraph's Agent Server protocol under `/langgraph` (clients take `<server>/langgraph` as
   * their `apiUrl`; see docs/langgraph-protocol.md), or `false` to leave it off. Default: on.
   */
  langgraph?: boolean;
}

/** Options of a server's metrics (see docs/metrics.md). */
export interface MetricsOptions {
  /**
   * A bearer token that may scrape `/metrics` (`--metrics-token`), beside tokens with the
   * `metrics` scope. Ignored in open mode, where `/metrics` is open.
   */
  token?: string | undefined;
  /** Also export prom-client's default process metrics (`--metrics-process`). Default false. */
  processMetrics?: boolean | undefined;
  /** How long one store read of the pending approvals serves scrapes, ms. Default 2000. */
  pendingCacheMs?: number | undefined;
}

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
 * Answers a request Node's HTTP parser refused before Fastify saw it (headers past
 * `maxHeaderSize`, a request timeout, malformed HTTP) in the API's error shape, on the raw
 * socket, then closes the connection as Node does.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const rein =
    error.code === "HPE_HEADER_OVERFLOW"
      ? new HeadersTooLargeError(maxHeaderSize)
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? new RequestTimeoutError()
        : new InvalidInputError("The request is not well-formed HTTP.", {
            reason: error.code ?? "bad_request",
          });
  const { status, body } = reinErrorResponse(rein);
  const text = JSON.stringify(body);
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
    );
  socket.destroy(error);
}

function mapFastifyError(error: FastifyError, bodyLimit: number): ReinError | null {
  if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE" || error.statusCode === 413)
    return new PayloadTooLargeError(bodyLimit);
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)
    return new InvalidInputError(`The request is malformed: ${error.message.slice(0, 300)}`, {
      reason: error.code ?? "bad_request",
    });
  return null;
}

/**
 * Builds the server (not yet listening).
 *
 * @example
 * const server = await createServer({ store, graphs, auth: openAuth() });
 * const url = await server.listen({ port: 8080, host: "127.0.0.1" });
 */
export async function createServer(options: ServerOptions): Promise<ReinServer> {
  const served = servableStore(options.store, options);
  const bodyLimit = options.bodyLimit ?? 1024 * 1024;
  const app = Fastify({
    bodyLimit,
    logger: options.logger ?? false,
    onProtoPoisoning: "error",
    onConstructorPoisoning: "error",
    routerOptions: { maxParamLength: 2048 },
    requestIdHeader: "x-request-id",
    genReqId: () => crypto.randomUUID(),
    clientErrorHandler: answerClientError,
    // Router errors (a malformed URL, a path parameter past the limit) answer in Rein's shape too.
    frameworkErrors: (error, _request, reply) => {
      const { status, body } = reinErrorResponse(
        mapFastifyError(error, bodyLimit) ??
          new InvalidInputError("The request URL is malformed.", { reason: error.code }),
      );
      void (reply as unknown as FastifyReply).code(status).send(body);
    },
  });
  // Every answer applied through the store this server compiles its graphs against is counted:
  // resumes, bulk decisions, the deadline timer, cancellations.
  const wired =
    options.metrics === false
      ? null
      : wireMetrics(served, {
          pendingCacheMs: options.metrics?.pendingCacheMs,
          processMetrics: options.metrics?.processMetrics,
        });
  const metrics = wired?.metrics ?? null;
  const store = wired?.store ?? served;
  const registry = new GraphRegistry(
    store,
    options.graphs,
    options.leaseTtlMs !== undefined ? { ttlMs: options.leaseTtlMs } : undefined,
    options.policies,
  );
  const runs = new RunManager(options.scale?.mirror ?? null);
  if (wired) runs.observe(wired.runs);
  const leaseTtlMs = options.leaseTtlMs ?? registry.all()[0]?.leaseSettings.ttlMs ?? 30_000;
  const concurrency = options.concurrency ?? 4;
  if (concurrency < 1 && !options.scale) {
    metrics?.close();
    throw new InvalidInputError(
      "A server without scale-out executes its background runs itself: concurrency must be at least 1.",
    );
  }
  const background = new BackgroundRuns({
    store,
    registry,
    runs,
    concurrency,
    leaseTtlMs,
    recover: options.recover !== false,
    fanout: options.scale?.fanout ?? null,
    log: app.log,
  });
  /** Set when shutdown starts: `/readyz` says so while running work drains. */
  let closing = false;
  const context: ServerContext = {
    store,
    storeKind: options.storeKind ?? "custom",
    registry,
    auth: options.auth,
    runs,
    background,
    routes: [],
    pingMs: options.pingMs ?? 15_000,
    queuePollMs: options.queuePollMs ?? 2_000,
    streams: new Set(),
    scale: options.scale ?? null,
    auditKey: options.auditKey ?? null,
    metrics,
    ready: () =>
      readiness({ store: options.store, scale: options.scale ?? null, closing: () => closing }),
  };
  if (options.scale) relayFanout(options.scale.fanout, runs);
  app.setReplySerializer((payload) => toWireJson(payload));
  const allowed = new Set(options.corsOrigins ?? []);
  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    const origin = request.headers.origin;
    if (!origin || !allowed.has(origin)) return;
    reply.header("access-control-allow-origin", origin);
    reply.header("vary", "origin");
    // Content-Location and Location name a new run to LangGraph clients (the protocol layer).
    reply.header("access-control-expose-headers", "x-request-id, content-location, location");
    if (request.method === "OPTIONS") {
      reply.header("access-control-allow-methods", "GET, POST, PATCH, PUT, DELETE");
      reply.header(
        "access-control-allow-headers",
        "authorization, x-api-key, content-type, idempotency-key, last-event-id",
      );
      await reply.code(204).send();
    }
  });
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const rein = ReinError.is(error) ? error : mapFastifyError(error, bodyLimit);
    if (!rein) {
      request.log.error({ err: error }, "request failed");
      return reply.code(500).send({
        error: "internal_error",
        message: "The server failed to handle this request; it was logged with its request id.",
        details: { requestId: request.id },
      });
    }
    const { status, body } = reinErrorResponse(rein);
    if (
      status === 409 &&
      typeof body.details["threadId"] === "string" &&
      !("headCheckpointId" in body.details)
    ) {
      // Every 409 carries the latest metadata so the caller can re-decide without another read.
      // The id is the one the refusing call was made for (core raised it with it).
      const threadId = body.details["threadId"] as ThreadId;
      const latest = await latestMetadata(context.store, threadId).catch(() => null);
      if (latest) body.details = { ...body.details, latest };
    }
    if (retryableCodes.has(body.error)) reply.header("retry-after", "1");
    if (status >= 500) request.log.error({ err: error }, "request failed");
    else request.log.info({ code: body.error, status }, "request refused");
    return reply.code(status).send(body);
  });
  app.setNotFoundHandler(async (request, reply) => {
    const { status, body } = reinErrorResponse(
      new NotFoundError("route", `${request.method} ${request.url.slice(0, 200)}`),
    );
    return reply.code(status).send(body);
  });
  if (metrics) {
    countRequests(app, metrics);
    registerMetricsRoute(
      app,
      context,
      metrics,
      options.metrics ? (options.metrics.token ?? null) : null,
    );
  }
  registerMetaRoutes(app, context);
  registerThreadRoutes(app, context);
  registerRunRoutes(app, context);
  registerInterruptRoutes(app, context);
  registerDecisionRoutes(app, context);
  registerAuditRoutes(app, context);
  registerWhoamiRoute(app, context);
  const webhooks = webhookBackendOf(options.store);
  if (webhooks) registerWebhookRoutes(app, context, webhooks);
  if (options.slack) registerSlackRoutes(app, context, parseSlackConfig(options.slack, "slack"));
  registerLinkRoutes(app, context, options.links ?? null);
  if (options.langgraph !== false) {
    await registerLangGraph(app, context);
    await app.register(langgraphV2(context), { prefix: LANGGRAPH_PREFIX });
  }
  if (options.consoleDir !== undefined) await registerConsole(app, options.consoleDir);

  const timers =
    options.deadlines === false
      ? []
      : context.registry.all().map((graph) =>
          graph.startDeadlineTimer({
            intervalMs: deadlineIntervalFromEnv(),
            onError: (error) =>
              app.log.warn({ err: error, graph: graph.name }, "deadline timer failed"),
          }),
        );
  // Queued runs and runs a crashed process left running are picked up now and by a periodic
  // sweep (a run whose lease is still held by a live process is left alone).
  background.start();
  const delivery =
    webhooks && options.webhookDelivery !== false
      ? new WebhookDeliveryLoop(
          webhooks.webhooks,
          webhooks.serializer,
          options.webhookDelivery ?? DEFAULT_DELIVERY,
          app.log,
          {
            notifiers: options.notifiers ?? [],
            policyOf: async (id) => (await served.getInterrupt(id as InterruptId))?.policy,
            onAttempt: wired?.onAttempt,
          },
        )
      : null;
  delivery?.start();
  const drainMs = options.drainMs ?? 30_000;
  app.addHook("preClose", async () => {
    closing = true;
    for (const timer of timers) timer.stop();
    await delivery?.stop();
    await background.stop();
    await context.runs.drain(drainMs);
    for (const stream of context.streams) stream.close();
    metrics?.close();
  });
  return {
    app,
    context,
    async listen({ port = 0, host = "127.0.0.1" }) {
      const address = await app.listen({ port, host });
      return address.replace("[::1]", "127.0.0.1");
    },
    async close() {
      await app.close();
    },
  };
}
