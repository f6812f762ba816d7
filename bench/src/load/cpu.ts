/**
 * CPU time of a server process and of the Postgres backends serving it, read from `/proc` (Linux):
 * what one resume costs the machine, beside what it costs in wall time. The backends are found by
 * the `application_name` the server's connection string gives them, and polled while the load
 * runs, so a backend that ends before the load does still counts what it used until last seen.
 */
import { readFileSync } from "node:fs";
import type pg from "pg";

/** Clock ticks per second of `/proc/<pid>/stat` (`getconf CLK_TCK`; 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU milliseconds (user + system) a process has used so far, or `null` once it is gone. */
export function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces, inside parentheses).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** What a {@link CpuMeter} measured between start and stop, in CPU milliseconds. */
export interface CpuUse {
  server: number;
  /** The Postgres backends with the server's `application_name` (0 on SQLite). */
  backends: number;
}

/** Measures one server's CPU (and its Postgres backends') over a stretch of load. */
export class CpuMeter {
  readonly #start = new Map<number, number>();
  readonly #last = new Map<number, number>();
  #serverStart = 0;
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> = Promise.resolve();

  /**
   * @param pid the server process
   * @param backends a connection to the server's Postgres and the server's `application_name`,
   *   or null on SQLite
   */
  constructor(
    private readonly pid: number,
    private readonly backends: { client: pg.Client; application: string } | null,
  ) {}

  /** Backend pids of the server, with their CPU so far. */
  async #sample(): Promise<Map<number, number>> {
    const seen = new Map<number, number>();
    if (!this.backends) return seen;
    const { rows } = await this.backends.client.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE application_name = $1",
      [this.backends.application],
    );
    for (const { pid } of rows) {
      const ms = cpuMs(pid);
      if (ms !== null) seen.set(pid, ms);
    }
    return seen;
  }

  /** Starts measuring; backends are polled every `pollMs` until {@link CpuMeter.stop}. */
  async start(pollMs = 200): Promise<void> {
    this.#serverStart = cpuMs(this.pid) ?? 0;
    for (const [pid, ms] of await this.#sample()) this.#start.set(pid, ms);
    const poll = (): void => {
      this.#polling = this.#sample().then((seen) => {
        for (const [pid, ms] of seen) this.#last.set(pid, ms);
      });
    };
    this.#timer = setInterval(poll, pollMs);
  }

  /** Stops measuring and returns the CPU used since {@link CpuMeter.start}. */
  async stop(): Promise<CpuUse> {
    clearInterval(this.#timer);
    await this.#polling;
    const server = (cpuMs(this.pid) ?? 0) - this.#serverStart;
    for (const [pid, ms] of await this.#sample()) this.#last.set(pid, ms);
    let backends = 0;
    // A backend that started during the load used all its CPU in it.
    for (const [pid, ms] of this.#last) backends += ms - (this.#start.get(pid) ?? 0);
    return { server, backends };
  }
}

/** `url` with `application_name` set, so the server's backends can be told apart. */
export function withApplicationName(url: string, application: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set("application_name", application);
  return parsed.toString();
}
