/**
 * `rein` CLI processes for the multi-process tests: spawned from the package's bin, ready once
 * stdout prints their ready line, with their stderr kept for failure messages.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";

/** The CLI entry point. */
export const REIN_BIN = resolve(import.meta.dirname, "../../bin/rein.mjs");

/** The graphs module the processes serve (`--graphs`). */
export const TEST_GRAPHS = resolve(import.meta.dirname, "graphs.ts");

/** A spawned `rein` process. */
export interface Proc {
  child: ChildProcess;
  /** The first capture group of the ready line (the listening URL of `serve`), if any. */
  url: string | null;
  /** Its stderr so far. */
  log: () => string;
  /** Its stdout so far (the JSON request log of `serve`). */
  out: () => string;
}

/**
 * Spawns `rein <args>` with `env` added to this process's environment; resolves once stdout
 * matches `ready`, rejects if it exits first.
 */
export function launchRein(
  args: string[],
  ready: RegExp,
  env: Record<string, string> = {},
): Promise<Proc> {
  const child = spawn(process.execPath, [REIN_BIN, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let log = "";
  child.stderr?.on("data", (c: Buffer) => (log += c.toString()));
  return new Promise((done, fail) => {
    let out = "";
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      const match = ready.exec(out);
      if (match) done({ child, url: match[1] ?? null, log: () => log, out: () => out });
    });
    child.on("exit", (code) => fail(new Error(`${args[0]} exited ${code}: ${log}`)));
  });
}
