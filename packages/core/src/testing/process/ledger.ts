/**
 * An append-only ledger file shared by a test and its worker processes: each line is one JSON
 * record, appended with one synchronous write, so a record written before a SIGKILL survives it.
 * Side effects and commits seen by workers are counted here.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";

/** One ledger record. */
export type LedgerEntry = Record<string, unknown>;

/** An append-only JSON-lines file. */
export class Ledger {
  constructor(readonly path: string) {}

  /** Appends one record (one `write` of one line: atomic for lines below the pipe buffer size). */
  append(entry: LedgerEntry): void {
    appendFileSync(this.path, `${JSON.stringify(entry)}\n`);
  }

  /** Every record so far, oldest first. A torn last line (a writer killed mid-write) is skipped. */
  read(): LedgerEntry[] {
    if (!existsSync(this.path)) return [];
    const out: LedgerEntry[] = [];
    for (const line of readFileSync(this.path, "utf8").split("\n")) {
      if (line.trim() === "") continue;
      try {
        out.push(JSON.parse(line) as LedgerEntry);
      } catch {
        // A line cut by a kill is not a record.
      }
    }
    return out;
  }

  /** Records whose fields equal those of `match`. */
  where(match: LedgerEntry): LedgerEntry[] {
    return this.read().filter((e) => Object.entries(match).every(([k, v]) => e[k] === v));
  }
}
