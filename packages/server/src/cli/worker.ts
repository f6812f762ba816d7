/**
 * `rein worker`: a process that executes background runs, takes over runs of dead processes and
 * fires deadlines on a shared Postgres store, without serving HTTP.
 */
import { deadlineIntervalFromEnv } from "../deadline-interval.ts";
import type { InterruptId } from "@rein/core";
import { loadPolicies } from "../policies.ts";
import { BackgroundRuns, type BackgroundLog } from "../background.ts";
import { GraphRegistry, loadGraphModule } from "../registry.ts";
import { RunManager } from "../runs.ts";
import { relayFanout, startScaleOut } from "../scale/index.ts";
import { openStore } from "../store.ts";
import { deliverySettingsFromEnv, WebhookDeliveryLoop } from "../webhooks/delivery.ts";
import { webhookBackendOf } from "../webhooks/store.ts";
import { loadNotifyConfig } from "../notify/config.ts";
import { notifySetup } from "../notify/setup.ts";
import { ExitCode, type Io } from "./output.ts";
import { UsageError, leaseTtlMs } from "./serve.ts";

/** Options of `rein worker`. */
export interface WorkerOptions {
  postgres?: string | undefined;
  schema?: string | undefined;
  graphs?: string | undefined;
  concurrency: number;
  /** A JSON file of default approval policies per graph (as `rein serve --policies`). */
  policies?: string | undefined;
  /** A notifier config, as `rein serve --notify` (its notifiers deliver here too). */
  notify?: string | undefined;
}

/** The worker's log: one JSON line per entry on stderr. */
function stderrLog(io: Io): BackgroundLog {
  const line = (level: string) => (details: object, message: string) =>
    io.err(
      `${JSON.stringify({ level, time: new Date().toISOString(), msg: message, ...flatten(details) })}\n`,
    );
  return { info: line("info"), warn: line("warn") };
}

/** Errors as their message (JSON.stringify drops an Error's fields). */
function flatten(details: object): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(details).map(([k, v]) => [k, v instanceof Error ? v.message : v]),
  );
}

/** Runs a worker until a signal. Resolves with the exit code. */
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
  const factories = await loadGraphModule(graphsModule);
  const notifyConfig = loadNotifyConfig({ file: options.notify });
  const opened = await openStore({ postgres: url, schema: options.schema });
  const saver = opened.postgres?.saver;
  if (!saver) throw new UsageError("rein worker needs a Postgres store.");
  const scale = await startScaleOut({
    store: saver,
    connectionString: url,
  });
  const ttlMs = leaseTtlMs();
  const policies = options.policies ? loadPolicies(options.policies) : {};
  const registry = new GraphRegistry(opened.store, factories, { ttlMs }, policies);
  const runs = new RunManager(scale.mirror);
  const stopRelay = relayFanout(scale.fanout, runs);
  const background = new BackgroundRuns({
    store: opened.store,
    registry,
    runs,
    concurrency: options.concurrency,
    leaseTtlMs: ttlMs,
    recover: true,
    fanout: scale.fanout,
    log: stderrLog(io),
  });
  background.start();
  const webhooks = webhookBackendOf(opened.store);
  const notify = notifyConfig ? notifySetup(notifyConfig, opened.store) : null;
  if (notify && webhooks)
    for (const line of await notify.subscribe(webhooks.webhooks))
      io.err(`rein worker: notifier subscription ${line}\n`);
  const delivery =
    webhooks &&
    new WebhookDeliveryLoop(
      webhooks.webhooks,
      webhooks.serializer,
      deliverySettingsFromEnv(),
      stderrLog(io),
      {
        notifiers: notify?.notifiers ?? [],
        policyOf: async (id) => (await opened.store.getInterrupt(id as InterruptId))?.policy,
      },
    );
  delivery?.start();
  const timers = registry
    .all()
    .map((graph) => graph.startDeadlineTimer({ intervalMs: deadlineIntervalFromEnv() }));
  io.err(
    `rein worker: ${opened.where}; graphs: ${registry.names().join(", ")}; concurrency ${options.concurrency}\n`,
  );
  io.out("worker ready\n");
  await new Promise<void>((resolve) => {
    const done = (): void => resolve();
    process.once("SIGINT", done);
    process.once("SIGTERM", done);
    stop?.addEventListener("abort", done, { once: true });
  });
  io.err("rein worker: shutting down, finishing running work...\n");
  for (const timer of timers) timer.stop();
  await delivery?.stop();
  notify?.close();
  await background.stop();
  await runs.drain(30_000);
  stopRelay();
  await scale.stop();
  await opened.store.close();
  io.err("rein worker: stopped\n");
  return ExitCode.OK;
}
