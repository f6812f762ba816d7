/** Spawning {@link ./child.ts} for the multi-process tests. */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { fileURLToPath } from "node:url";

const CHILD = fileURLToPath(new URL("./child.ts", import.meta.url));

/** A running child with its stdout lines. */
export interface Child {
  process: ChildProcessWithoutNullStreams;
  /** Resolves with the next stdout line. */
  nextLine(): Promise<string>;
  /** Resolves with the exit code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/** Starts `child.ts <mode> <args...>` under tsx. */
export function startChild(mode: string, ...args: string[]): Child {
  const child = spawn(process.execPath, ["--import", "tsx", CHILD, mode, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const waiters: ((line: string) => void)[] = [];
  let buffer = "";
  let stderr = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    buffer += chunk;
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      const waiter = waiters.shift();
      if (waiter) waiter(line);
      else lines.push(line);
      newline = buffer.indexOf("\n");
    }
  });
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stderr: string;
  }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, stderr })));
  return {
    process: child,
    nextLine: () => {
      const line = lines.shift();
      if (line !== undefined) return Promise.resolve(line);
      return Promise.race([
        new Promise<string>((resolve) => waiters.push(resolve)),
        exited.then(({ code, signal, stderr: err }) => {
          throw new Error(`child exited (${code ?? signal}) before writing a line: ${err}`);
        }),
      ]);
    },
    exited,
  };
}
