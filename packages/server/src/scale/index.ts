/**
 * Scale-out on Postgres: the LISTEN/NOTIFY channel that carries run events, queue wake-ups,
 * cancel and replay requests between the processes of a deployment, wired to one process's run
 * manager. The queue itself is the store's `queued` run rows (see `../background.ts`): the same
 * on SQLite and Postgres, so nothing here decides what runs.
 */
import type { PostgresSaver } from "@rein/postgres";
import type { RunManager, RunMirror } from "../run-manager.ts";
import { PgFanout, type FanoutLog } from "./fanout.ts";

export { PgFanout } from "./fanout.ts";
export type { FanoutMessage, RunEventMessage } from "./fanout.ts";

/** Options of {@link startScaleOut}. */
export interface ScaleOutOptions {
  store: PostgresSaver;
  /**
   * The URL to LISTEN on, or null for none (a transaction-mode pooler without a direct URL):
   * this process then still publishes, but hears nothing, and its sweep finds queued runs.
   */
  connectionString: string | null;
  /** Hears the listening connection's losses and reconnects. */
  log?: FanoutLog | undefined;
}

/** The scale-out parts of one process. */
export interface ScaleOut {
  fanout: PgFanout;
  /** Mirrors a run manager's events and notices to the other processes. */
  mirror: RunMirror;
  stop(): Promise<void>;
}

/** Starts the fan-out listener (when there is a URL to listen on). */
export async function startScaleOut(options: ScaleOutOptions): Promise<ScaleOut> {
  const fanout = new PgFanout(
    options.store.pool,
    options.connectionString ?? "",
    options.store.schema,
    options.log,
  );
  if (options.connectionString !== null) await fanout.start();
  return {
    fanout,
    mirror: {
      event: (hub, event) =>
        fanout.publish({
          kind: "event",
          runId: hub.runId,
          threadId: hub.threadId,
          event,
          done: event.event === "end" || event.event === "error",
          attempt: hub.attempt,
        }),
      change: (threadId) => fanout.publish({ kind: "change", threadId }),
      cancel: (runId) => fanout.publish({ kind: "cancel", runId }),
      queued: (threadId) => fanout.publish({ kind: "queued", threadId }),
    },
    stop: () => fanout.stop(),
  };
}

/**
 * Hands what other processes say to this process's run manager: a thread's queue changed (the
 * live approval feeds and the background queue listen there), stop a run, replay a run's events.
 * The other half of {@link ScaleOut.mirror}.
 *
 * @returns a function that stops relaying.
 */
export function relayFanout(fanout: PgFanout, runs: RunManager): () => void {
  const stops = [
    fanout.onChange((threadId) => runs.notifyLocal(threadId)),
    fanout.onCancel((runId) => void runs.cancel(runId)),
    fanout.onReplay(({ runId, after, attempt }) => runs.replay(runId, after, attempt)),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}
