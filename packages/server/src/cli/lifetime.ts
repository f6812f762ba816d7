/**
 * How long a `rein serve` or `rein worker` process lives: until SIGINT or SIGTERM (or a test's
 * abort signal), and not a moment less. A long-running process must not end because its event
 * loop ran out of work: while Postgres restarts, every socket of a worker is closed and its
 * reconnect and sweep timers are unref'd, so Node would find nothing keeping it alive, settle
 * nothing, and exit with code 13 ("unsettled top-level await"). {@link untilStopped} holds a
 * handle of its own for as long as the process is meant to run.
 */
import type { BackgroundLog } from "../background.ts";
import type { GraphModuleClose } from "../registry.ts";
import type { Io } from "./output.ts";

/** The signals that stop a process gracefully. */
const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;

/** Far below the 2^31-1 ms that a Node timer can hold; it only has to exist. */
const HOLD_MS = 1 << 30;

/** How often a process started by npm looks whether npm's shell is still its parent. */
const PARENT_CHECK_MS = 500;

/**
 * Whether this process was started by an npm script or `npx` (npm sets `npm_command`). npm
 * forwards SIGTERM to the shell it runs the command in, and that shell dies without passing it
 * on: the process would outlive `npm start` / `npx rein serve`, still listening. So such a process
 * also stops, gracefully, when its parent is gone. A process started otherwise (a service
 * manager, `nohup … &`) keeps running when its parent exits, as it always did.
 */
function followsParent(): boolean {
  return typeof process.env["npm_command"] === "string";
}

/**
 * Resolves when the process is told to stop: SIGINT, SIGTERM or `stop` — or, when npm started it,
 * its parent exited (see {@link followsParent}). Until then a ref'd timer keeps the event loop
 * alive, whatever the process's connections do.
 *
 * @returns the signal's name, `"parent exited"`, or `"abort"`.
 */
export function untilStopped(stop?: AbortSignal): Promise<string> {
  return new Promise((resolve) => {
    const hold = setInterval(() => undefined, HOLD_MS);
    const parent = process.ppid;
    const watch = followsParent()
      ? setInterval(() => {
          if (process.ppid !== parent) done("parent exited");
        }, PARENT_CHECK_MS)
      : null;
    const done = (why: string): void => {
      clearInterval(hold);
      if (watch) clearInterval(watch);
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

/** How long a graph module's close hook may take before shutdown goes on without it. */
const CLOSE_HOOK_MS = 10_000;

/**
 * Awaits a graph module's close hook, bounded: a hook that throws or hangs is logged, and the
 * shutdown goes on (the store must still close).
 */
export async function closeGraphModule(
  close: GraphModuleClose | null,
  who: string,
  io: Io,
): Promise<void> {
  if (!close) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), CLOSE_HOOK_MS);
  });
  try {
    const outcome = await Promise.race([close().then(() => "closed" as const), timeout]);
    io.err(
      outcome === "closed"
        ? `${who}: the graph module closed\n`
        : `${who}: the graph module's close hook did not finish within ${CLOSE_HOOK_MS / 1000} s; going on\n`,
    );
  } catch (error) {
    io.err(
      `${who}: the graph module's close hook failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
  } finally {
    clearTimeout(timer);
  }
}
