/**
 * The `rein-metrics` plugin: counts every answered request, serves `GET /metrics`, observes every
 * run beside the other observers of the run manager, and closes the instruments once the server
 * closed (an `onClose` hook: after the drain, so the drained runs are counted). Not
 * encapsulated: the request counter must see every route, the other plugins' included.
 */
import type { Checkpointer } from "@rein/core";
import { wireMetrics, type MetricsWiring } from "../metrics/wiring.ts";
import { countRequests, registerMetricsRoute } from "../routes/metrics.ts";
import { featurePlugin } from "./define.ts";
import type { ServerOptions } from "./options.ts";

/** The metrics of a server with `options` over `store`, or null when they are off. */
export function serverMetrics(store: Checkpointer, options: ServerOptions): MetricsWiring | null {
  if (options.metrics === false) return null;
  // Every answer applied through the store the graphs compile against is counted: resumes, bulk
  // decisions, the deadline timer, cancellations.
  return wireMetrics(store, {
    pendingCacheMs: options.metrics?.pendingCacheMs,
    processMetrics: options.metrics?.processMetrics,
  });
}

/** Options of {@link metricsPlugin}. */
export interface MetricsPluginOptions {
  wired: MetricsWiring;
  /** A bearer token that may scrape beside tokens with the `metrics` scope. */
  token: string | null;
}

/** Request counting, `GET /metrics`, the run observer and the instruments' close. */
export const metricsPlugin = featurePlugin<MetricsPluginOptions>(
  { name: "rein-metrics", dependencies: ["rein-context"], needs: ["rein"], encapsulated: false },
  (app, { wired, token }) => {
    countRequests(app, wired.metrics);
    registerMetricsRoute(app, app.rein, wired.metrics, token);
    const unobserve = app.rein.runs.observe(wired.runs);
    app.addHook("onClose", (_instance, done) => {
      unobserve();
      wired.metrics.close();
      done();
    });
  },
);
