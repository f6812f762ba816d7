/**
 * `rein worker`: a process that executes background runs and deadlines on a shared Postgres
 * store, without serving HTTP.
 */
import { ExitCode, type Io } from "./output.ts";
import { UsageError } from "./serve.ts";

/** Options of `rein worker`. */
export interface WorkerOptions {
  postgres?: string | undefined;
  graphs?: string | undefined;
  concurrency: number;
}

/** Runs a worker until a signal. */
export function worker(options: WorkerOptions, io: Io, _stop?: AbortSignal): Promise<number> {
  if (!(options.postgres ?? process.env["REIN_POSTGRES_URL"]))
    throw new UsageError(
      "rein worker needs --postgres URL: on SQLite, rein serve runs the work itself.",
    );
  io.err("rein worker: not available yet.\n");
  return Promise.resolve(ExitCode.FAILURE);
}
