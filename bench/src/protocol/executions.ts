/**
 * Counting node executions across processes: a graph served by another process appends one line
 * per execution of an asking node to the file `BENCH_EXECUTIONS` names (unset: nothing is
 * written), and the bench reads the file. One short synchronous append costs microseconds, the
 * same on every server, against operations that take milliseconds.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";

/** The environment variable naming the executions file. */
export const EXECUTIONS_ENV = "BENCH_EXECUTIONS";

/** Records one execution of `node` on `threadId` (called inside the graphs, in the server). */
export function recordExecution(threadId: string, node: string): void {
  const file = process.env[EXECUTIONS_ENV];
  if (file) appendFileSync(file, `${threadId} ${node}\n`);
}

/** Executions recorded in `file` so far, per `threadId node`. */
export function readExecutions(file: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!existsSync(file)) return counts;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line) counts.set(line, (counts.get(line) ?? 0) + 1);
  }
  return counts;
}

/** Total executions in `file` of the threads in `threads`. */
export function executionsOf(file: string, threads: ReadonlySet<string>): number {
  let total = 0;
  for (const [key, n] of readExecutions(file)) {
    if (threads.has(key.slice(0, key.indexOf(" ")))) total += n;
  }
  return total;
}
