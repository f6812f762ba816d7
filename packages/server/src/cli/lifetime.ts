/**
 * How long a `rein serve` or `rein worker` process lives: until SIGINT or SIGTERM (or a test's
 * abort signal), and not a moment less. A long-running process must not end because its event
 * loop ran out of work: while Postgres restarts, every socket of a worker is closed and its
 * reconnect and sweep timers are unref'd, so Node would find nothing keeping it alive, settle
 * nothing, and exit with code 13 ("unsettled top-level await"). {@link untilStopped} holds a
 * handle of its own for as long as the process is meant to run.
 */
import type { BackgroundLog } from "../background.ts";
import type { Io } from "./output.ts";

/** The signals that stop a process gracefully. */
const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;

/** Far below the 2^31-1 ms that a Node timer can hold; it only has to exist. */
const HOLD_MS = 1 << 30;

/**
 * Resolves when the process is told to stop: SIGINT, SIGTERM or `stop`. Until then a ref'd timer
 * keeps the event loop alive, whatever the process's connections do.
 *
 * @returns the signal's name, or `"abort"`.
 */
export function untilStopped(stop?: AbortSignal): Promise<string> {
  return new Promise((resolve) => {
    const hold = setInterval(() => undefined, HOLD_MS);
    const done = (why: string): void => {
      clearInterval(hold);
      for (const signal of STOP_SIGNALS) process.off(signal, handlers[signal]);
      stop?.removeEventListener("abort", onAbort);
      resolve(why);
    };
    const handlers = {
      SIGINT: () => done("SIGINT"),
      SIGTERM: () => done("SIGTERM"),
    };
    const onAbort = (): void => done("abort");
    for (const signal of STOP_SIGNALS) process.once(signal, handlers[signal]);
    if (stop?.aborted) done("abort");
    else stop?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A process's log: one JSON line per entry on stderr. */
export function stderrLog(io: Io): BackgroundLog {
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
