/**
 * Seeds a store with many paused threads fast: one thread is paused through the API (the
 * template), then its rows are copied N times with SQL, inside the database.
 *
 * Nothing about the schema is hard-coded except that per-thread tables have a `thread_id` column.
 * The column lists come from the catalog at run time (`PRAGMA table_info` / `pg_attribute`), so a
 * new migration (a new column, table or index) needs no change here:
 *
 * - every table with a `thread_id` column is copied, the template's rows only;
 * - identity / rowid columns (`seq`) are left out, so the database numbers the copies;
 * - values that must be unique across threads (the text columns of every unique index or primary
 *   key that does not include `thread_id`: interrupt ids, run ids, request ids, …) and the thread
 *   id itself are "tokens": in every text (and JSON) column of the copy, each token `t` is
 *   replaced by `t-c<n>` for copy n, so the encoded records inside the rows name the copy's ids
 *   too, consistently;
 * - everything else (checkpoint ids, task ids, timestamps, payloads) is kept: those are unique
 *   per thread only.
 *
 * The copies are fresh ids rather than the ids the runtime would derive (task and interrupt ids
 * are hashes that include the thread id); nothing re-derives a stored id on resume — the resumed
 * task looks its interrupt up by slot — and the load test resumes copies and checks the answers.
 */
import type pg from "pg";
import { column, inTransaction, type Db } from "../harness/sqlite.ts";

/** A column of a per-thread table, as the copy needs to know it. */
export interface CloneColumn {
  name: string;
  /** `text` columns get the token replacement; `json` ones too, through their text form. */
  kind: "text" | "json" | "other";
  /** Numbered by the database (rowid alias, identity, generated): left out of the copy. */
  omit: boolean;
  /** The declared type (`jsonb`, `TEXT`, …), for casting a replaced JSON value back. */
  type: string;
}

/** A table with a `thread_id` column, and the columns whose values must be unique across threads. */
export interface CloneTable {
  name: string;
  columns: CloneColumn[];
  /** Columns of unique indexes (primary key included) that do not contain `thread_id`. */
  globalKeys: string[];
}

/** How many rows one {@link cloneThread} call wrote, per table. */
export type CloneReport = Record<string, number>;

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/** The suffix of copy `n`, as an SQL expression of the copy number column `n.i`. */
const SUFFIX = "'-c' || n.i";

/**
 * The SELECT list of the copy of one table: each kept column, with every token replaced in
 * text and JSON columns. Tokens are replaced longest first, so a token that contains another is
 * replaced whole.
 */
export function copyExpressions(
  table: CloneTable,
  tokens: readonly string[],
  jsonCast: (textExpr: string, column: CloneColumn) => string,
): { columns: string[]; select: string[] } {
  const ordered = [...new Set(tokens)]
    .filter((t) => t.length > 0)
    .sort((a, b) => b.length - a.length);
  const replaced = (expr: string): string =>
    ordered.reduce(
      (acc, token) => `replace(${acc}, ${literal(token)}, ${literal(token)} || ${SUFFIX})`,
      expr,
    );
  const kept = table.columns.filter((c) => !c.omit);
  return {
    columns: kept.map((c) => quote(c.name)),
    select: kept.map((c) => {
      const col = `t.${quote(c.name)}`;
      if (c.kind === "text") return replaced(col);
      if (c.kind === "json") return jsonCast(replaced(`CAST(${col} AS text)`), c);
      return col;
    }),
  };
}

/** The id of copy `n` of a template value (what the replacement makes of a token). */
export function copiedId(value: string, n: number): string {
  return `${value}-c${n}`;
}

// ---------------------------------------------------------------------------------------------
// SQLite

/** The per-thread tables of a SQLite file, from its catalog. */
export function sqliteTables(db: Db): CloneTable[] {
  const names = column<string>(
    db,
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
  );
  const tables: CloneTable[] = [];
  for (const name of names) {
    const info = db.prepare(`SELECT name, type, pk FROM pragma_table_info(?)`).all(name) as {
      name: string;
      type: string;
      pk: number;
    }[];
    if (!info.some((c) => c.name === "thread_id")) continue;
    const pkColumns = info.filter((c) => c.pk > 0);
    // A lone INTEGER PRIMARY KEY of a rowid table is the rowid: SQLite numbers it.
    const rowidAlias =
      pkColumns.length === 1 && pkColumns[0]?.type.toUpperCase() === "INTEGER"
        ? pkColumns[0].name
        : null;
    const columns: CloneColumn[] = info.map((c) => ({
      name: c.name,
      kind: /INT|REAL|NUM|FLOA|DOUB/i.test(c.type) ? "other" : "text",
      omit: c.name === rowidAlias,
      type: c.type,
    }));
    const globalKeys = new Set<string>();
    const indexes = db.prepare(`SELECT name, "unique" FROM pragma_index_list(?)`).all(name) as {
      name: string;
      unique: number;
    }[];
    for (const index of indexes.filter((i) => i.unique === 1)) {
      const cols = column<string>(db, `SELECT name FROM pragma_index_info(?)`, index.name);
      if (cols.includes("thread_id")) continue;
      for (const c of cols) if (c !== rowidAlias) globalKeys.add(c);
    }
    if (
      rowidAlias === null &&
      pkColumns.length > 0 &&
      !pkColumns.some((c) => c.name === "thread_id")
    )
      for (const c of pkColumns) globalKeys.add(c.name);
    tables.push({ name, columns, globalKeys: [...globalKeys] });
  }
  return tables;
}

/**
 * Copies the rows of thread `template` `copies` times in a SQLite file (thread ids
 * `<template>-c1` … `<template>-c<copies>`), in one transaction. Open the file with no server
 * writing to it, or in WAL mode with a busy timeout.
 */
export function cloneThreadSqlite(db: Db, template: string, copies: number): CloneReport {
  const tables = sqliteTables(db);
  const tokens = templateTokens(template, tables, (table, name) =>
    column<unknown>(
      db,
      `SELECT DISTINCT ${quote(name)} FROM ${quote(table)} WHERE thread_id = ?`,
      template,
    ),
  );
  const report: CloneReport = {};
  inTransaction(db, () => {
    db.exec("CREATE TEMP TABLE IF NOT EXISTS clone_n (i INTEGER PRIMARY KEY)");
    db.exec("DELETE FROM clone_n");
    db.prepare(
      "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?) INSERT INTO clone_n SELECT i FROM s",
    ).run(copies);
    for (const table of tables) {
      const { columns, select } = copyExpressions(table, tokens, (expr) => expr);
      const sql = `INSERT INTO ${quote(table.name)} (${columns.join(", ")})
        SELECT ${select.join(", ")} FROM ${quote(table.name)} t CROSS JOIN clone_n n
        WHERE t.thread_id = ? ORDER BY n.i`;
      report[table.name] = Number(db.prepare(sql).run(template).changes);
    }
    db.exec("DROP TABLE clone_n");
  });
  return report;
}

// ---------------------------------------------------------------------------------------------
// Postgres

/** The per-thread tables of a Postgres schema, from its catalog. */
export async function postgresTables(client: pg.ClientBase, schema: string): Promise<CloneTable[]> {
  const cols = await client.query<{
    table: string;
    column: string;
    type: string;
    omit: boolean;
  }>(
    `SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type,
            (a.attidentity <> '' OR a.attgenerated <> '' OR coalesce(pg_get_expr(d.adbin, d.adrelid), '') LIKE 'nextval(%') AS omit
       FROM pg_attribute a
       JOIN pg_class c ON c.oid = a.attrelid AND c.relkind IN ('r', 'p')
       JOIN pg_namespace s ON s.oid = c.relnamespace AND s.nspname = $1
       LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attnum > 0 AND NOT a.attisdropped
      ORDER BY c.relname, a.attnum`,
    [schema],
  );
  const keys = await client.query<{ table: string; columns: string[] }>(
    `SELECT c.relname AS table, array_agg(a.attname::text ORDER BY a.attnum) AS columns
       FROM pg_index i
       JOIN pg_class c ON c.oid = i.indrelid
       JOIN pg_namespace s ON s.oid = c.relnamespace AND s.nspname = $1
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY (i.indkey)
      WHERE i.indisunique
      GROUP BY c.relname, i.indexrelid`,
    [schema],
  );
  const byTable = new Map<string, CloneTable>();
  for (const row of cols.rows) {
    const table = byTable.get(row.table) ?? { name: row.table, columns: [], globalKeys: [] };
    table.columns.push({
      name: row.column,
      kind: /^(text|character|json|jsonb)/.test(row.type)
        ? row.type.startsWith("json")
          ? "json"
          : "text"
        : "other",
      omit: row.omit,
      type: row.type,
    });
    byTable.set(row.table, table);
  }
  const tables = [...byTable.values()].filter((t) => t.columns.some((c) => c.name === "thread_id"));
  for (const table of tables) {
    const omitted = new Set(table.columns.filter((c) => c.omit).map((c) => c.name));
    const global = new Set<string>();
    for (const key of keys.rows.filter((k) => k.table === table.name))
      if (!key.columns.includes("thread_id"))
        for (const c of key.columns) if (!omitted.has(c)) global.add(c);
    table.globalKeys = [...global];
  }
  return tables;
}

/**
 * Copies the rows of thread `template` `copies` times in a Postgres schema (thread ids
 * `<template>-c1` … `<template>-c<copies>`), in one transaction, then ANALYZEs the tables (as
 * autovacuum would soon after such a load).
 */
export async function cloneThreadPostgres(
  client: pg.ClientBase,
  schema: string,
  template: string,
  copies: number,
): Promise<CloneReport> {
  const tables = await postgresTables(client, schema);
  const values = new Map<string, unknown[]>();
  for (const table of tables)
    for (const column of table.globalKeys) {
      const r = await client.query<{ v: unknown }>(
        `SELECT DISTINCT ${quote(column)} AS v FROM ${quote(schema)}.${quote(table.name)} WHERE thread_id = $1`,
        [template],
      );
      values.set(
        `${table.name}.${column}`,
        r.rows.map((x) => x.v),
      );
    }
  const tokens = templateTokens(
    template,
    tables,
    (table, column) => values.get(`${table}.${column}`) ?? [],
  );
  const report: CloneReport = {};
  await client.query("BEGIN");
  try {
    for (const table of tables) {
      const { columns, select } = copyExpressions(
        table,
        tokens,
        (expr, column) => `(${expr})::${column.type}`,
      );
      const r = await client.query(
        `INSERT INTO ${quote(schema)}.${quote(table.name)} (${columns.join(", ")})
         SELECT ${select.join(", ")} FROM ${quote(schema)}.${quote(table.name)} t
         CROSS JOIN generate_series(1, $2::int) AS n(i)
         WHERE t.thread_id = $1 ORDER BY n.i`,
        [template, copies],
      );
      report[table.name] = r.rowCount ?? 0;
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  }
  for (const table of tables) await client.query(`ANALYZE ${quote(schema)}.${quote(table.name)}`);
  return report;
}

/** The thread id plus every text value of the template's global keys. */
function templateTokens(
  template: string,
  tables: CloneTable[],
  read: (table: string, column: string) => unknown[],
): string[] {
  const tokens = [template];
  for (const table of tables)
    for (const column of table.globalKeys)
      for (const v of read(table.name, column)) if (typeof v === "string") tokens.push(v);
  return tokens;
}
