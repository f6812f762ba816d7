/**
 * The parent's side of a worker process: spawn it, read its JSON-line reports, write lines to its
 * stdin, and stop, continue or kill it at the moment a report says.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";

/** How to start a worker: the command and its leading arguments (see {@link bundleWorker}). */
export interface ProcessCommand {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** One line a worker reported on stdout, parsed (a line that is not JSON is `{ text }`). */
export type Report = Record<string, unknown>;

/** How a worker process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** A running worker process. */
export class WorkerProcess {
  /** Every report so far, in order. */
  readonly reports: Report[] = [];
  /** Resolves when the process has exited (never rejects). */
  readonly exited: Promise<Exit>;
  readonly child: ChildProcessWithoutNullStreams;
  #stderr = "";
  #exit: Exit | null = null;
  #waiters: (() => void)[] = [];

  private constructor(child: ChildProcessWithoutNullStreams) {
    this.child = child;
    let buffer = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      buffer += chunk;
      let newline = buffer.indexOf("\n");
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line.trim() !== "") this.reports.push(parseReport(line));
        newline = buffer.indexOf("\n");
      }
      this.#wake();
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => (this.#stderr += chunk));
    // A worker killed while the parent writes to its stdin must not fail the parent.
    child.stdin.on("error", () => undefined);
    this.exited = new Promise<Exit>((resolve) => {
      child.on("close", (code, signal) => {
        this.#exit = { code, signal, stderr: this.#stderr };
        this.#wake();
        resolve(this.#exit);
      });
    });
  }

  /** Starts `command args... extra...` with stdin, stdout and stderr piped. */
  static start(command: ProcessCommand, extra: string[] = []): WorkerProcess {
    const child = spawn(command.command, [...command.args, ...extra], {
      env: { ...process.env, ...command.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    return new WorkerProcess(child);
  }

  /** What the worker wrote on stderr so far. */
  get stderr(): string {
    return this.#stderr;
  }

  /** The process id. */
  get pid(): number {
    return this.child.pid ?? -1;
  }

  /**
   * Resolves with the first report (from the start) that `match` accepts. Rejects when the worker
   * exits without writing one, or after `timeoutMs`.
   */
  async waitFor(match: (report: Report) => boolean, timeoutMs = 30_000): Promise<Report> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.reports.find(match);
      if (found) return found;
      if (this.#exit)
        throw new Error(
          `worker ${this.pid} exited (${this.#exit.code ?? this.#exit.signal}) before the awaited report; reports: ${JSON.stringify(this.reports)}; stderr: ${this.#exit.stderr}`,
        );
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `worker ${this.pid} did not write the awaited report within ${timeoutMs} ms; reports: ${JSON.stringify(this.reports)}; stderr: ${this.#stderr}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits for a report whose `event` is `event`. */
  waitForEvent(event: string, timeoutMs?: number): Promise<Report> {
    return this.waitFor((r) => r.event === event, timeoutMs);
  }

  /** Reports whose `event` is `event`. */
  events(event: string): Report[] {
    return this.reports.filter((r) => r.event === event);
  }

  /** Writes one line to the worker's stdin. */
  send(line: string): void {
    if (!this.child.stdin.destroyed) this.child.stdin.write(`${line}\n`);
  }

  /** Sends a signal (`SIGKILL`, `SIGSTOP`, `SIGCONT`...) unless the process has exited. */
  signal(signal: NodeJS.Signals): void {
    if (!this.#exit) this.child.kill(signal);
  }

  /** Kills the process with SIGKILL and waits until it is gone. */
  async kill(): Promise<Exit> {
    this.signal("SIGKILL");
    return this.exited;
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

function parseReport(line: string): Report {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Report)
      : { text: line };
  } catch {
    return { text: line };
  }
}
