/**
 * What the CLI prints: aligned tables for people, JSON for scripts, a spinner on a terminal, and
 * the exit codes.
 */

/** Exit codes of `rein`. */
export const ExitCode = {
  /** Done. */
  OK: 0,
  /** The server failed (5xx), could not be reached, or something unexpected happened. */
  FAILURE: 1,
  /** The command line is wrong. */
  USAGE: 2,
  /** The server refused the request (4xx other than 409): bad input, auth, not found. */
  REFUSED: 3,
  /** Conflict (409): a stale target or a busy thread; re-read and decide again. */
  CONFLICT: 4,
  /** `rein audit verify`: the audit log does not verify (the first broken link is printed). */
  BROKEN: 5,
} as const;

/**
 * The exit code of an error by its HTTP status: 409 is a conflict, 5xx a failure, any other
 * status `otherwise` (a server's refusal, or a command line naming something wrong).
 */
export function exitCodeOf(status: number, otherwise: number): number {
  if (status === 409) return ExitCode.CONFLICT;
  return status >= 500 ? ExitCode.FAILURE : otherwise;
}

/** Where the CLI writes (injectable for tests). */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** True when stderr is a terminal (spinners only there). */
  tty: boolean;
}

/** The process's own streams. */
export const processIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  tty: process.stderr.isTTY,
};

/** Renders rows as an aligned text table with a header. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n") + "\n";
}

/** A short one-line summary of a JSON value. */
export function summary(value: unknown, max = 60): string {
  const text = JSON.stringify(value) ?? "undefined";
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Human age: `42s`, `5m`, `3h`, `2d`. */
export function age(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** Shows a spinner on a terminal while `work` runs. */
export async function withSpinner<T>(io: Io, label: string, work: Promise<T>): Promise<T> {
  if (!io.tty) return work;
  const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
  let i = 0;
  const timer = setInterval(() => io.err(`\r${frames[i++ % frames.length]} ${label}`), 80);
  try {
    return await work;
  } finally {
    clearInterval(timer);
    io.err("\r\x1b[K");
  }
}
