/**
 * The worker's side of the protocol: JSON-line reports on stdout (written synchronously, so a
 * report made just before a SIGKILL or SIGSTOP has reached the pipe) and lines read from stdin.
 */
import { writeSync } from "node:fs";
import { createInterface, type Interface } from "node:readline";
import { ReinError } from "../../errors.ts";

/** Writes one report line to stdout, synchronously. */
export function report(data: Record<string, unknown>): void {
  writeSync(1, `${JSON.stringify(data)}\n`);
}

let reader: Interface | null = null;
const buffered: string[] = [];
const waiting: ((line: string) => void)[] = [];

/** Resolves with the next line the parent writes to stdin. */
export function nextLine(): Promise<string> {
  if (!reader) {
    reader = createInterface({ input: process.stdin });
    reader.on("line", (line) => {
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else buffered.push(line);
    });
  }
  const line = buffered.shift();
  if (line !== undefined) return Promise.resolve(line);
  return new Promise((resolve) => waiting.push(resolve));
}

/** Waits until the parent writes exactly `expected` on stdin. */
export async function waitForLine(expected: string): Promise<void> {
  while ((await nextLine()) !== expected);
}

/** Stops reading stdin so that it does not keep the process alive. */
export function closeInput(): void {
  reader?.close();
  process.stdin.destroy();
}

/** An error as a report: its class, its Rein code (or null when it is not a typed error). */
export function describeFailure(error: unknown): Record<string, unknown> {
  const typed = ReinError.is(error);
  const details = typed ? error.details : {};
  const own = (error as { retryable?: unknown } | null)?.retryable;
  const retryable = typeof own === "boolean" ? own : details["retryable"];
  return {
    ok: false,
    name: error instanceof Error ? error.name : typeof error,
    code: typed ? error.code : null,
    retryable: typeof retryable === "boolean" ? retryable : null,
    message: error instanceof Error ? error.message : String(error),
  };
}
