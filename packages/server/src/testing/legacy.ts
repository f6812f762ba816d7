/**
 * A store as a server before side records left it: its side records back in the `ctx.once`
 * slots that version kept them in (task id: the kind; key: the feature's key), and its schema
 * one version back, before the migration that copies them over (SQLite 15, Postgres 17). Opening
 * the store again runs that migration: what a test sees next is what an upgrade leaves.
 *
 * Thread ids here must be ASCII (the side-record key's length prefix is read as characters).
 */
import { DatabaseSync } from "node:sqlite";
import type pg from "pg";

/** The kinds the server keeps (see SIDE_KINDS). */
const KINDS = `('http:idempotency', 'http:links', 'notify:slack')`;

/**
 * The once slot of each side record, then no side records, then the schema version before
 * `version`: every later migration's record goes, and `undo` drops what those later migrations
 * made, so opening the store again runs them all as an upgrade from that version would.
 */
const rewind = (s: string, version: number, undo = ""): string => `
  INSERT INTO ${s}once_results (thread_id, task_id, key, value)
    SELECT thread_id, kind,
      substr(key, length(CAST(length(thread_id) AS TEXT)) + length(thread_id) + 3), value
    FROM ${s}side_records WHERE kind IN ${KINDS} AND thread_id IS NOT NULL;
  DELETE FROM ${s}side_records WHERE kind IN ${KINDS};
  DELETE FROM ${s}schema_migrations WHERE version >= ${version};
  ${undo}
`;

/** What SQLite's migrations after 15 made (16: the index of paused task results). */
const SQLITE_AFTER_15 = "DROP INDEX IF EXISTS task_results_paused;";

/** Rewinds the (closed) SQLite file at `path`. @returns how many records went back. */
export function rewindSqlite(path: string): number {
  const db = new DatabaseSync(path);
  try {
    const row = db
      .prepare(`SELECT count(*) AS n FROM side_records WHERE kind IN ${KINDS}`)
      .get() as { n: number };
    db.exec(`BEGIN; ${rewind("", 15, SQLITE_AFTER_15)} COMMIT;`);
    return row.n;
  } finally {
    db.close();
  }
}

/** Rewinds Postgres `schema` on `pool`. @returns how many records went back. */
export async function rewindPostgres(pool: pg.Pool, schema: string): Promise<number> {
  const s = `"${schema}".`;
  const count = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${s}side_records WHERE kind IN ${KINDS}`,
  );
  await pool.query(`BEGIN; ${rewind(s, 17)} COMMIT;`);
  return count.rows[0]?.n ?? 0;
}
