/**
 * `rein worker`: a process that executes background runs, takes over runs of dead processes and
 * fires deadlines on a shared Postgres store, without serving HTTP.
 */
import { deadlineIntervalFromEnv } from "../deadline-interval.ts";
import type { Checkpointer } from "@rein/core";
import { loadPolicies } from "../policies.ts";
import { BackgroundRuns } from "../background.ts";
import { GraphRegistry, graphModuleClose, loadGraphModule } from "../registry.ts";
import { RunManager } from "../run-manager.ts";
import { relayFanout, startScaleOut } from "../scale/index.ts";
import { openStore } from "../store.ts";
import { deliverySettingsFromEnv, WebhookDeliveryLoop } from "../webhooks/delivery.ts";
import { webhookBackendOf } from "../webhooks/store.ts";
import { loadNotifyConfig, type NotifyConfig } from "../notify/config.ts";
import { notifySetup, type NotifySetup } from "../notify/setup.ts";
import { serveMetrics, type MetricsEndpoint } from "../metrics/endpoint.ts";
import type { ReinMetrics } from "../metrics/recorder.ts";
import { wireMetrics, type MetricsWiring } from "../metrics/wiring.ts";
import { closeGraphModule, stderrLog, untilStopped } from "./lifetime.ts";
import { ExitCode, type Io } from "./output.ts";
import { NO_LISTEN, UsageError, drainMs, leaseTtlMs } from "./serve.ts";
import { interruptIdOf } from "../ids.ts";

/** Options of `rein worker`. */
export interface WorkerOptions {
  postgres?: string | undefined;
  schema?: string | undefined;
  /** A direct Postgres URL for LISTEN when `--postgres` goes through PgBouncer (`--listen-url`). */
  listenUrl?: string | undefined;
  graphs?: string | undefined;
  concurrency: number;
  /** A JSON file of default approval policies per graph (as `rein serve --policies`). */
  policies?: string | undefined;
  /** A notifier config, as `rein serve --notify` (its notifiers deliver here too). */
  notify?: string | undefined;
  /** Serve `GET /metrics` on this port (see docs/metrics.md). Default: no endpoint. */
  metricsPort?: number | undefined;
  /** The metrics endpoint's host. Default 127.0.0.1; another needs a metrics token. */
  metricsHost?: string | undefined;
  /** A bearer token scrapes of the metrics endpoint must send. */
  metricsToken?: string | undefined;
  /** Also export the default process metrics. */
  metricsProcess?: boolean | undefined;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/** A metrics endpoint on a host other than loopback needs a token. */
function checkMetricsHost(options: WorkerOptions): void {
  const host = options.metricsHost ?? "127.0.0.1";
  if (options.metricsPort !== undefined && !LOOPBACK.has(host) && !options.metricsToken)
    throw new UsageError(
      `--metrics-host ${host} is not loopback: pass --metrics-token (or set REIN_METRICS_TOKEN) so only your scraper reads the metrics.`,
    );
}

/** Serves the worker's metrics on `--metrics-port` and says where. */
async function startEndpoint(
  metrics: ReinMetrics,
  options: WorkerOptions,
  io: Io,
): Promise<MetricsEndpoint> {
  const endpoint = await serveMetrics(metrics, {
    port: options.metricsPort ?? 0,
    host: options.metricsHost,
    token: options.metricsToken ?? null,
  });
  io.err(`rein worker: metrics at ${endpoint.url}/metrics\n`);
  return endpoint;
}

/** Runs a worker until a signal. Resolves with the exit code. */
/**
 * The worker's webhook delivery loop, started, with the notifiers of its `--notify` config (whose
 * subscriptions it makes sure of first): a worker delivers like a server.
 */
async function startDelivery(
  store: Checkpointer,
  notifyConfig: NotifyConfig | null,
  wired: MetricsWiring | null,
  io: Io,
): Promise<{ delivery: WebhookDeliveryLoop | null; notify: NotifySetup | null }> {
  const webhooks = webhookBackendOf(store);
  const notify = notifyConfig ? notifySetup(notifyConfig, store) : null;
  if (notify && webhooks)
    for (const line of await notify.subscribe(webhooks.webhooks))
      io.err(`rein worker: notifier subscription ${line}\n`);
  const delivery = webhooks
    ? new WebhookDeliveryLoop(
        webhooks.webhooks,
        webhooks.serializer,
        deliverySettingsFromEnv(),
        stderrLog(io),
        {
          notifiers: notify?.notifiers ?? [],
          policyOf: async (id) => (await store.getInterrupt(interruptIdOf(id)))?.policy,
          onAttempt: wired?.onAttempt,
        },
      )
    : null;
  delivery?.start();
  return { delivery, notify };
}

export async function worker(options: WorkerOptions, io: Io, stop?: AbortSignal): Promise<number> {
  const url = options.postgres ?? process.env["REIN_POSTGRES_URL"];
  if (!url)
    throw new UsageError(
      "rein worker needs --postgres URL: on SQLite, rein serve runs the work itself.",
    );
  const graphsModule = options.graphs ?? process.env["REIN_GRAPHS"];
  if (!graphsModule)
    throw new UsageError("Pass --graphs MODULE (a module exporting `graphs`) or set REIN_GRAPHS.");
  if (options.concurrency < 1)
    throw new UsageError("--concurrency must be at least 1 for a worker.");
  checkMetricsHost(options);
  const factories = await loadGraphModule(graphsModule);
  const notifyConfig = loadNotifyConfig({ file: options.notify });
  const log = stderrLog(io);
  const opened = await openStore(
    { postgres: url, schema: options.schema, listenUrl: options.listenUrl },
    log,
  );
  const saver = opened.postgres?.saver;
  if (!saver) throw new UsageError("rein worker needs a Postgres store.");
  const scale = await startScaleOut({
    store: saver,
    connectionString: opened.postgres?.listenUrl ?? null,
    log,
  });
  if (!scale.fanout.listening) io.err(`rein worker: ${NO_LISTEN}\n`);
  const ttlMs = leaseTtlMs();
  const policies = options.policies ? loadPolicies(options.policies) : {};
  // The deadline timers and the runs of this worker answer through the wired store: counted.
  const wired =
    options.metricsPort === undefined
      ? null
      : wireMetrics(opened.store, { processMetrics: options.metricsProcess });
  const store = wired?.store ?? opened.store;
  const registry = new GraphRegistry(store, factories, { ttlMs }, policies);
  const runs = new RunManager(scale.mirror);
  if (wired) runs.observe(wired.runs);
  const stopRelay = relayFanout(scale.fanout, runs);
  const background = new BackgroundRuns({
    store,
    registry,
    runs,
    concurrency: options.concurrency,
    leaseTtlMs: ttlMs,
    recover: true,
    fanout: scale.fanout,
    log,
  });
  background.start();
  const { delivery, notify } = await startDelivery(opened.store, notifyConfig, wired, io);
  const endpoint = wired ? await startEndpoint(wired.metrics, options, io) : null;
  const timers = registry
    .all()
    .map((graph) => graph.startDeadlineTimer({ intervalMs: deadlineIntervalFromEnv() }));
  io.err(
    `rein worker: ${opened.where}; graphs: ${registry.names().join(", ")}; concurrency ${options.concurrency}\n`,
  );
  // Listen for SIGINT/SIGTERM before saying "ready" (see `rein serve`): a signal sent the moment
  // the line is read must find a handler.
  const stopped = untilStopped(stop);
  io.out("worker ready\n");
  const why = await stopped;
  io.err(`rein worker: ${why}: shutting down, finishing running work...\n`);
  for (const timer of timers) timer.stop();
  await delivery?.stop();
  notify?.close();
  await background.stop();
  const handed = await runs.drain(drainMs());
  if (handed > 0)
    io.err(`rein worker: handed ${handed} running run(s) over to the other processes\n`);
  await closeGraphModule(await graphModuleClose(graphsModule), "rein worker", io);
  stopRelay();
  await endpoint?.close();
  wired?.metrics.close();
  await scale.stop();
  await opened.store.close();
  io.err("rein worker: stopped\n");
  return ExitCode.OK;
}
