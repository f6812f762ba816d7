/**
 * The SQLite driver: Node's built-in `node:sqlite` (`DatabaseSync`), so installing the store
 * compiles nothing. This module loads it without its experimental-feature warning, opens
 * connections, runs transactions and names the driver's result codes; the rest of the store
 * speaks only to what it exports.
 */
import type * as NodeSqlite from "node:sqlite";
import type { DatabaseSync, StatementSync } from "node:sqlite";

/** The `node:sqlite` module. */
type SqliteModule = typeof NodeSqlite;

/** The experimental warning Node 22 prints when `node:sqlite` loads (24 and newer print none). */
const SQLITE_WARNING = /^SQLite is an experimental feature/;

/** True for exactly the warning `node:sqlite` emits when it loads. */
function isSqliteWarning(warning: string | Error, rest: unknown[]): boolean {
  const [options] = rest;
  const type =
    typeof options === "string"
      ? options
      : typeof options === "object" && options !== null && "type" in options
        ? options.type
        : warning instanceof Error
          ? warning.name
          : undefined;
  const message = typeof warning === "string" ? warning : warning.message;
  return type === "ExperimentalWarning" && SQLITE_WARNING.test(message);
}

/**
 * Loads `node:sqlite`, dropping the one warning its first load emits on Node 22 ("SQLite is an
 * experimental feature…"): the store is the user's default and that line would greet every run
 * of their program. Only that warning is dropped, and only while the module loads: the filter is
 * installed around a synchronous `process.getBuiltinModule` call and removed right after, so any
 * other warning (another experimental feature, a deprecation) still prints. A static `import` of
 * `node:sqlite` could not be filtered this way: Node loads imported built-ins before any module
 * body runs.
 */
function loadSqlite(): SqliteModule {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back as it was, unbound
  const emit = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    if (isSqliteWarning(warning, rest)) return;
    Reflect.apply(emit, this, [warning, ...rest]);
  };
  try {
    return process.getBuiltinModule("node:sqlite");
  } finally {
    process.emitWarning = emit;
  }
}

/** `node:sqlite`, loaded once with the warning filtered (see {@link loadSqlite}). */
export const sqlite: SqliteModule = loadSqlite();

/** Opens (creating if needed) the database file at `path`, or `":memory:"`. */
export function openDatabase(path: string, options: { readOnly?: boolean } = {}): DatabaseSync {
  // Foreign keys are off as in SQLite's own default: the schema declares none, and node:sqlite
  // turns enforcement on unless told otherwise.
  return new sqlite.DatabaseSync(path, {
    readOnly: options.readOnly ?? false,
    enableForeignKeyConstraints: false,
  });
}

/** The value of the PRAGMA `name` (its first column), e.g. `pragma(db, "journal_mode")`. */
export function pragma(db: DatabaseSync, name: string): unknown {
  const row = db.prepare(`PRAGMA ${name}`).get();
  return row === undefined ? undefined : Object.values(row)[0];
}

/** Transactions on one connection, with their four statements prepared once. */
export interface Transactions {
  /** Runs `body` in a deferred transaction (`BEGIN`): committed if it returns, else rolled back. */
  deferred<T>(body: () => T): T;
  /** Runs `body` in a `BEGIN IMMEDIATE` transaction, which takes the write lock up front. */
  immediate<T>(body: () => T): T;
}

/**
 * The transactions of `db`. Not nestable: a body that starts another transaction fails with
 * SQLite's "cannot start a transaction within a transaction". Prepared once because a statement
 * parsed per call costs about as much as a small commit.
 */
export function transactions(db: DatabaseSync): Transactions {
  const begin = db.prepare("BEGIN");
  const beginImmediate = db.prepare("BEGIN IMMEDIATE");
  const commit = db.prepare("COMMIT");
  const rollback = db.prepare("ROLLBACK");
  const run = <T>(start: StatementSync, body: () => T): T => {
    start.run();
    try {
      const result = body();
      commit.run();
      return result;
    } catch (error) {
      // SQLite has already rolled back after some failures (a full disk, an I/O error); then
      // ROLLBACK itself fails, and the caller must see the first error, not that one.
      try {
        rollback.run();
      } catch {
        // no transaction left to roll back
      }
      throw error;
    }
  };
  return {
    deferred: (body) => run(begin, body),
    immediate: (body) => run(beginImmediate, body),
  };
}

/**
 * SQLite's primary result codes by number (https://sqlite.org/rescode.html). node:sqlite reports
 * the extended code as `errcode`; its low byte is the primary code.
 */
const PRIMARY_CODES: Readonly<Record<number, string>> = {
  1: "SQLITE_ERROR",
  2: "SQLITE_INTERNAL",
  3: "SQLITE_PERM",
  4: "SQLITE_ABORT",
  5: "SQLITE_BUSY",
  6: "SQLITE_LOCKED",
  7: "SQLITE_NOMEM",
  8: "SQLITE_READONLY",
  9: "SQLITE_INTERRUPT",
  10: "SQLITE_IOERR",
  11: "SQLITE_CORRUPT",
  12: "SQLITE_NOTFOUND",
  13: "SQLITE_FULL",
  14: "SQLITE_CANTOPEN",
  15: "SQLITE_PROTOCOL",
  16: "SQLITE_EMPTY",
  17: "SQLITE_SCHEMA",
  18: "SQLITE_TOOBIG",
  19: "SQLITE_CONSTRAINT",
  20: "SQLITE_MISMATCH",
  21: "SQLITE_MISUSE",
  22: "SQLITE_NOLFS",
  23: "SQLITE_AUTH",
  24: "SQLITE_FORMAT",
  25: "SQLITE_RANGE",
  26: "SQLITE_NOTADB",
  27: "SQLITE_NOTICE",
  28: "SQLITE_WARNING",
};

/**
 * The primary result code of a failure SQLite reported (`"SQLITE_BUSY"`, `"SQLITE_CONSTRAINT"`,
 * …), or `undefined` for any other error (a closed connection, a value that cannot be bound).
 */
export function sqliteCode(error: unknown): string | undefined {
  if (!(error instanceof Error) || !("code" in error) || error.code !== "ERR_SQLITE_ERROR")
    return undefined;
  const errcode = "errcode" in error ? error.errcode : undefined;
  return typeof errcode === "number"
    ? (PRIMARY_CODES[errcode & 0xff] ?? "SQLITE_ERROR")
    : undefined;
}

/**
 * Sets a store connection's pragmas: busy_timeout first (the pragmas and migrations after it may
 * wait on another process), WAL, the sync level, and the page cache.
 */
export function configureConnection(
  db: DatabaseSync,
  options: { busyTimeoutMs?: number | undefined; synchronous?: "normal" | "full" | undefined },
): void {
  db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec(`PRAGMA synchronous = ${options.synchronous === "full" ? "FULL" : "NORMAL"}`);
  // The page cache better-sqlite3's build gave every connection (SQLITE_DEFAULT_CACHE_SIZE),
  // 16 MB; node:sqlite's build keeps SQLite's 2 MB.
  db.exec("PRAGMA cache_size = -16000");
}
