/**
 * The bench's own SQLite connections (floors, size probes, row cloning) on Node's built-in
 * `node:sqlite`, the driver Rein's store runs on. `@rein/sqlite` is imported first: it loads
 * `node:sqlite` with its Node 22 ExperimentalWarning filtered, and every later load is the same
 * module without a warning. LangGraph.js's SQLite saver brings its own driver (better-sqlite3).
 */
import "@rein/sqlite";
import { existsSync } from "node:fs";
import type { DatabaseSync, SQLInputValue } from "node:sqlite";

const { DatabaseSync: Database } = process.getBuiltinModule("node:sqlite");

/** A connection. */
export type Db = DatabaseSync;

/** Opens the SQLite file at `path`, or `":memory:"`; with `mustExist`, never creates one. */
export function openSqlite(path: string, options: { mustExist?: boolean } = {}): Db {
  if (options.mustExist && !existsSync(path)) throw new Error(`no SQLite file at ${path}`);
  return new Database(path, { enableForeignKeyConstraints: false });
}

/** The first column of every row of `sql`. */
export function column<T>(db: Db, sql: string, ...params: SQLInputValue[]): T[] {
  return db
    .prepare(sql)
    .all(...params)
    .map((row) => Object.values(row)[0] as T);
}

/** The first column of the first row of `sql`. */
export function value<T>(db: Db, sql: string, ...params: SQLInputValue[]): T | undefined {
  const row = db.prepare(sql).get(...params);
  return row === undefined ? undefined : (Object.values(row)[0] as T);
}

/** Runs `body` in one transaction: committed if it returns, rolled back if it throws. */
export function inTransaction<T>(db: Db, body: () => T): T {
  db.exec("BEGIN");
  try {
    const result = body();
    db.exec("COMMIT");
    return result;
  } catch (error) {
    db.exec("ROLLBACK");
    throw error;
  }
}
