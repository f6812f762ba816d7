/**
 * How much a store holds, measured from outside the saver through a separate connection, the
 * same way for both systems.
 *
 * - Logical bytes: the sum, over every table, row and column, of the byte length of the stored
 *   value (SQLite: `length(CAST(v AS BLOB))`; Postgres: `octet_length` of text, bytea and the text
 *   form of json/jsonb, `pg_column_size` for fixed-width types). What the saver wrote, independent
 *   of pages, indexes, compression and free space.
 * - Disk bytes: what the store takes on disk (SQLite: the file after a WAL checkpoint; Postgres:
 *   `pg_total_relation_size` of every table, with indexes and TOAST).
 */
import { statSync } from "node:fs";
import type pg from "pg";
import { column, openSqlite, value, type Db } from "./sqlite.ts";

/** The measuring method in one paragraph, for RESULTS.md. */
export const SIZE_METHOD =
  "sizes are measured from outside each saver through a separate connection, the same way for both systems. " +
  "*Logical bytes* sum the byte length of every stored value in every table (SQLite `length(CAST(v AS BLOB))`; Postgres `octet_length` " +
  "of text, bytea and the text form of json/jsonb, `pg_column_size` of fixed-width columns): what the saver wrote, independent of pages, " +
  "indexes, compression and free space. *Disk bytes* are the SQLite file after a WAL checkpoint, or `pg_total_relation_size` of every table " +
  "(indexes and TOAST included). Bytes per checkpoint at step k are logical bytes after step k minus after step k−1.";

const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** Logical bytes of every user table of a SQLite file. */
export function sqliteLogicalBytes(db: Db): number {
  const tables = column<string>(
    db,
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
  );
  let total = 0;
  for (const table of tables) {
    const columns = column<string>(db, `SELECT name FROM pragma_table_info(?)`, table);
    if (columns.length === 0) continue;
    const expr = columns
      .map((c) => `coalesce(length(CAST(${quoteIdent(c)} AS BLOB)), 0)`)
      .join(" + ");
    total += value<number>(db, `SELECT coalesce(sum(${expr}), 0) FROM ${quoteIdent(table)}`) ?? 0;
  }
  return total;
}

/** Size of a SQLite file on disk after folding its WAL into it. */
export function sqliteDiskBytes(db: Db, path: string): number {
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const wal = (() => {
    try {
      return statSync(`${path}-wal`).size;
    } catch {
      return 0;
    }
  })();
  return statSync(path).size + wal;
}

/** Opens a second, read-mostly connection to a SQLite file for measuring it. */
export function openSqliteProbe(path: string): Db {
  return openSqlite(path, { mustExist: true });
}

/** Schemas of the connected database that hold a saver's tables (every non-system schema). */
const USER_SCHEMAS = "NOT IN ('pg_catalog', 'information_schema', 'pg_toast')";

/** Logical bytes of every user table of the connected database. */
export async function postgresLogicalBytes(client: pg.ClientBase): Promise<number> {
  const cols = await client.query<{
    table_schema: string;
    table_name: string;
    column_name: string;
    data_type: string;
  }>(
    `SELECT c.table_schema, c.table_name, c.column_name, c.data_type FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
      WHERE c.table_schema ${USER_SCHEMAS} ORDER BY c.table_schema, c.table_name, c.ordinal_position`,
  );
  const byTable = new Map<string, string[]>();
  for (const { table_schema, table_name, column_name, data_type } of cols.rows) {
    const c = quoteIdent(column_name);
    const expr = ["bytea", "text", "character varying", "character"].includes(data_type)
      ? `octet_length(${c})`
      : data_type === "jsonb" || data_type === "json" || data_type === "ARRAY"
        ? `octet_length(${c}::text)`
        : `pg_column_size(${c})`;
    const table = `${quoteIdent(table_schema)}.${quoteIdent(table_name)}`;
    byTable.set(table, [...(byTable.get(table) ?? []), `coalesce(${expr}, 0)`]);
  }
  let total = 0;
  for (const [table, exprs] of byTable) {
    const r = await client.query<{ n: string }>(
      `SELECT coalesce(sum(${exprs.join(" + ")}), 0)::bigint AS n FROM ${table}`,
    );
    total += Number(r.rows[0]?.n ?? 0);
  }
  return total;
}

/** On-disk bytes of every user table, with indexes and TOAST. */
export async function postgresDiskBytes(client: pg.ClientBase): Promise<number> {
  const r = await client.query<{ n: string }>(
    `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname ${USER_SCHEMAS} AND c.relkind = 'r'`,
  );
  return Number(r.rows[0]?.n ?? 0);
}
