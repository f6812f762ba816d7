/**
 * Scale-out on Postgres: the job queue of background runs and the LISTEN/NOTIFY fan-out of run
 * events, wired to one process's run manager.
 */
import type { PostgresSaver } from "@rein/postgres";
import type { RunMirror } from "../runs.ts";
import { PgFanout } from "./fanout.ts";
import { PgJobs } from "./jobs.ts";

export { PgFanout } from "./fanout.ts";
export { PgJobs, runJob } from "./jobs.ts";
export type { JobSettings, RunJob } from "./jobs.ts";

/** Options of {@link startScaleOut}. */
export interface ScaleOutOptions {
  store: PostgresSaver;
  connectionString: string;
  /** Jobs this process runs at once (0: it only enqueues). */
  concurrency: number;
  /** Lease TTL of the graphs (ms): jobs of a dead worker reappear after about twice that. */
  leaseTtlMs?: number;
}

/** The scale-out parts of one process. */
export interface ScaleOut {
  fanout: PgFanout;
  jobs: PgJobs;
  concurrency: number;
  /** Mirrors a run manager's events and change notices to the other processes. */
  mirror: RunMirror;
  stop(): Promise<void>;
}

/** Starts the fan-out listener and the queue (not yet taking jobs: see `PgJobs.work`). */
export async function startScaleOut(options: ScaleOutOptions): Promise<ScaleOut> {
  const fanout = new PgFanout(options.store.pool, options.connectionString, options.store.schema);
  await fanout.start();
  const ttlSeconds = Math.max(1, Math.ceil((options.leaseTtlMs ?? 30_000) / 1000));
  const jobs = new PgJobs({
    connectionString: options.connectionString,
    schema: `${options.store.schema}_jobs`.slice(0, 63),
    concurrency: options.concurrency,
    expireInSeconds: ttlSeconds * 2,
    maintenanceIntervalSeconds: Math.min(10, ttlSeconds),
    retryDelaySeconds: Math.max(1, Math.ceil(ttlSeconds / 2)),
  });
  await jobs.start();
  return {
    fanout,
    jobs,
    concurrency: options.concurrency,
    mirror: {
      event: (hub, event) =>
        fanout.publish({
          kind: "event",
          runId: hub.runId,
          threadId: hub.threadId,
          event,
          done: event.event === "end" || event.event === "error",
        }),
      change: (threadId) => fanout.publish({ kind: "change", threadId }),
    },
    async stop() {
      await jobs.stop();
      await fanout.stop();
    },
  };
}
