/**
 * Background runs through a queue in Postgres (pg-boss). A job says "run R of thread T must reach
 * a rest state": the first worker that takes it starts the run (with its input) or continues it
 * from its last checkpoint. Per-thread serialization and crash detection come from core's fenced
 * thread leases, not from the queue: a job whose run is held by a live lease is retried later; a
 * run whose holder died (its lease expired) is taken over. The queue's own expiry only makes a
 * crashed worker's job visible again; running it twice is harmless because of that check.
 */
import PgBoss from "pg-boss";
import type { Checkpointer, RunId, ThreadId } from "@rein/core";
import { ThreadBusyError } from "@rein/core";
import type { GraphRegistry } from "../registry.ts";
import type { RunManager } from "../runs.ts";

/** What a job carries. */
export interface RunJob {
  threadId: string;
  runId: string;
  /** The input that starts the run (absent: a watch job for a run started elsewhere). */
  input?: Record<string, unknown>;
  actor: string;
  tenant: string | null;
  interruptBefore?: string[];
  interruptAfter?: string[];
  onPending?: "error" | "cancel";
}

/** Settings of the job queue. */
export interface JobSettings {
  connectionString: string;
  /** Schema of pg-boss's tables. */
  schema: string;
  /** How many jobs this process runs at once; 0 only enqueues. */
  concurrency: number;
  /** Seconds after which an active job of a dead worker is handed out again. */
  expireInSeconds: number;
  /** How often expired jobs are looked for (pg-boss maintenance), in seconds. */
  maintenanceIntervalSeconds: number;
  /** Seconds between attempts of a job whose run is held by a live process. */
  retryDelaySeconds: number;
}

const QUEUE = "rein-runs";

/** The queue of background runs. */
export class PgJobs {
  private readonly boss: PgBoss;

  constructor(private readonly settings: JobSettings) {
    this.boss = new PgBoss({
      connectionString: settings.connectionString,
      schema: settings.schema,
      max: 4,
      supervise: true,
      schedule: false,
      maintenanceIntervalSeconds: settings.maintenanceIntervalSeconds,
      monitorStateIntervalSeconds: 60,
    });
    this.boss.on("error", () => undefined);
  }

  /** Creates pg-boss's schema and the queue (idempotent). */
  async start(): Promise<void> {
    await this.boss.start();
    await this.boss.createQueue(QUEUE, {
      name: QUEUE,
      retryLimit: 100_000,
      retryDelay: this.settings.retryDelaySeconds,
      expireInSeconds: this.settings.expireInSeconds,
    });
  }

  /** Enqueues a job. `startAfter` delays a watch job (most runs finish before it is due). */
  async enqueue(job: RunJob, startAfterSeconds = 0): Promise<void> {
    await this.boss.send(QUEUE, job, {
      ...(startAfterSeconds > 0 ? { startAfter: startAfterSeconds } : {}),
    });
  }

  /** Takes jobs with `concurrency` parallel consumers. */
  async work(store: Checkpointer, registry: GraphRegistry, runs: RunManager): Promise<void> {
    for (let i = 0; i < this.settings.concurrency; i++)
      await this.boss.work<RunJob>(
        QUEUE,
        { batchSize: 1, pollingIntervalSeconds: 0.5 },
        async ([job]) => {
          if (job) await runJob(store, registry, runs, job.data);
        },
      );
  }

  /** Stops taking jobs and waits for the running ones (graceful). */
  async stop(): Promise<void> {
    await this.boss.stop({ graceful: true, wait: true, timeout: 30_000 });
  }
}

/**
 * Brings a job's run to a rest state: starts it, takes it over from its last checkpoint, or
 * does nothing when it already rests.
 *
 * @throws ThreadBusyError while a live process holds the thread (the queue retries later).
 */
export async function runJob(
  store: Checkpointer,
  registry: GraphRegistry,
  runs: RunManager,
  job: RunJob,
): Promise<void> {
  const threadId = job.threadId as ThreadId;
  const thread = await store.getThread(threadId);
  if (!thread) return; // deleted meanwhile
  const run = await store.getRun(job.runId as RunId);
  if (run && run.status !== "running") return;
  if (!run && job.input === undefined) return;
  const lease = await store.getLease(threadId);
  if (lease) throw new ThreadBusyError(threadId, lease.owner);
  const graph = await registry.forThread(store, thread);
  const head = await store.getCheckpoint(threadId, "");
  // A watch job of a run that never committed its input checkpoint: there is nothing to resume.
  if (job.input === undefined && head?.runId !== job.runId) return;
  const start = !run || (job.input !== undefined && head?.runId !== job.runId);
  const active = runs.start(
    graph,
    start ? { kind: "input", input: job.input ?? {} } : { kind: "input", input: null },
    job.runId,
    {
      threadId: job.threadId,
      actor: job.actor,
      tenant: job.tenant,
      runId: job.runId,
      ...(job.interruptBefore ? { interruptBefore: job.interruptBefore } : {}),
      ...(job.interruptAfter ? { interruptAfter: job.interruptAfter } : {}),
      ...(job.onPending ? { onPending: job.onPending } : {}),
    },
  );
  await active.result.catch(() => undefined);
}
