/**
 * The plugins that execute work in this process rather than answer requests: `rein-deadlines`
 * (each graph's deadline timer, which also takes the escalation ladder's steps) and
 * `rein-background` (the queue of accepted runs and the recovery sweep). Both encapsulated and
 * registered last, so their `preClose` hooks run after the context's and the notifications':
 * timers stop, then the queue, then running work drains and the open SSE streams close.
 *
 * `preClose`, not `onClose`: Fastify closes the HTTP server before `onClose` hooks, and the
 * server's close waits for open SSE streams, which end only once the runs they follow drained.
 */
import { deadlineIntervalFromEnv } from "../deadline-interval.ts";
import { featurePlugin } from "./define.ts";

/** Runs every served graph's deadline timer in this process. */
export const deadlinesPlugin = featurePlugin<Record<never, never>>(
  { name: "rein-deadlines", dependencies: ["rein-context"], needs: ["rein"], encapsulated: true },
  (app) => {
    const timers = app.rein.registry.all().map((graph) =>
      graph.startDeadlineTimer({
        intervalMs: deadlineIntervalFromEnv(),
        onError: (error) =>
          app.log.warn({ err: error, graph: graph.name }, "deadline timer failed"),
      }),
    );
    app.addHook("preClose", (done) => {
      for (const timer of timers) timer.stop();
      done();
    });
  },
);

/** Options of {@link backgroundPlugin}. */
export interface BackgroundPluginOptions {
  /** How long shutdown waits for running work before aborting it. */
  drainMs: number;
}

/**
 * Starts the background queue: queued runs and runs a crashed process left running are picked
 * up now and by a periodic sweep (a run whose lease a live process holds is left alone).
 */
export const backgroundPlugin = featurePlugin<BackgroundPluginOptions>(
  { name: "rein-background", dependencies: ["rein-context"], needs: ["rein"], encapsulated: true },
  (app, { drainMs }) => {
    const context = app.rein;
    app.addHook("onReady", (done) => {
      context.background.start();
      done();
    });
    app.addHook("preClose", async () => {
      await context.background.stop();
      await context.runs.drain(drainMs);
      for (const stream of context.streams) stream.close();
    });
  },
);
