/**
 * The `rein-context` plugin: builds what every route is handed — the store, the graphs, auth,
 * the run manager, the background queue — and decorates the app with it as `rein`. It applies to
 * the whole app (not encapsulated): every other feature plugin depends on it.
 *
 * Shutdown: its `preClose` hook is the first to run (hooks of the app run before those of the
 * encapsulated feature plugins), so `/readyz` says "shutting down" while the rest drains.
 */
import { hasCapability, type Checkpointer } from "@rein/core";
import { authenticate } from "../auth.ts";
import { BackgroundRuns } from "../background.ts";
import type { ServerContext } from "../context.ts";
import { StoreApiKeys } from "../identity/api-keys.ts";
import type { MetricsWiring } from "../metrics/wiring.ts";
import { readiness } from "../readiness.ts";
import { GraphRegistry } from "../registry.ts";
import { RunManager } from "../run-manager.ts";
import { relayFanout } from "../scale/index.ts";
import { featurePlugin } from "./define.ts";
import type { ServerOptions } from "./options.ts";

/** What the context is built from. */
export interface ContextPluginOptions {
  server: ServerOptions;
  /** The store once its capabilities were checked (`servableStore`). */
  served: Checkpointer;
  /** The metrics, or null when they are off: their counting store view replaces `served`. */
  wired: MetricsWiring | null;
}

/** Decorates the app with `rein`, the {@link ServerContext}. */
export const contextPlugin = featurePlugin<ContextPluginOptions>(
  { name: "rein-context", decorates: ["rein"], encapsulated: false },
  (app, { server: options, served, wired }) => {
    const store = wired?.store ?? served;
    const registry = new GraphRegistry(
      store,
      options.graphs,
      options.leaseTtlMs !== undefined ? { ttlMs: options.leaseTtlMs } : undefined,
      options.policies,
    );
    const runs = new RunManager(options.scale?.mirror ?? null);
    const background = new BackgroundRuns({
      store,
      registry,
      runs,
      concurrency: options.concurrency ?? 4,
      leaseTtlMs: options.leaseTtlMs ?? registry.all()[0]?.leaseSettings.ttlMs ?? 30_000,
      recover: options.recover !== false,
      fanout: options.scale?.fanout ?? null,
      log: app.log,
    });
    // API keys are read from the store on every request (no cache): a revocation holds at once
    // on every process that shares it.
    const keys = hasCapability(options.store, "apiKeys")
      ? new StoreApiKeys(options.store.apiKeys)
      : null;
    let closing = false;
    const context: ServerContext = {
      store,
      storeKind: options.storeKind ?? "custom",
      registry,
      auth: options.auth,
      authenticate: (header) => authenticate(options.auth, header, keys),
      runs,
      background,
      routes: [],
      pingMs: options.pingMs ?? 15_000,
      queuePollMs: options.queuePollMs ?? 2_000,
      streams: new Set(),
      scale: options.scale ?? null,
      auditKey: options.auditKey ?? null,
      metrics: wired?.metrics ?? null,
      ready: () =>
        readiness({
          store: options.store,
          schema: options.schema ?? null,
          scale: options.scale ?? null,
          closing: () => closing,
        }),
    };
    if (options.scale) relayFanout(options.scale.fanout, runs);
    app.decorate("rein", context);
    app.addHook("preClose", (done) => {
      closing = true;
      done();
    });
  },
);
