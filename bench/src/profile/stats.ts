/**
 * What one phase of the profile cost the database, from counters that do not depend on how busy
 * the machine is: statements (`pg_stat_statements`), commits (`pg_stat_database`), WAL
 * (`pg_stat_wal`), rows written per table and whether their updates were HOT
 * (`pg_stat_user_tables`), hence index entries written (a row inserted or updated without HOT
 * adds one entry to every index of its table).
 */
import pg from "pg";

/** One statement's share of a phase. */
export interface StatementCost {
  query: string;
  /** False for a statement run inside a server-side function. */
  toplevel: boolean;
  calls: number;
  rows: number;
  totalMs: number;
  sharedBlocks: number;
  walBytes: number;
}

/** Rows written to one table in a phase. */
export interface TableWrites {
  table: string;
  indexes: number;
  /** Of them partial: a row outside the predicate writes no entry there. */
  partial: number;
  inserted: number;
  updated: number;
  hot: number;
  deleted: number;
}

/** Counters read before and after a phase. */
interface Counters {
  lsn: string;
  commits: number;
  walRecords: number;
  walFpi: number;
}

/** What a phase cost, whole (divide by the operations yourself). */
export interface PhaseCost {
  statements: StatementCost[];
  commits: number;
  walBytes: number;
  walRecords: number;
  walFpi: number;
  tables: TableWrites[];
}

/** Cluster-wide counters, read by `admin` from another database than the workload's. */
async function counters(admin: pg.Client, database: string): Promise<Counters> {
  await admin.query("SELECT pg_stat_clear_snapshot()");
  const { rows } = await admin.query<{
    lsn: string;
    commits: string;
    records: string;
    fpi: string;
  }>(
    `SELECT pg_current_wal_insert_lsn()::text AS lsn,
       (SELECT xact_commit FROM pg_stat_database WHERE datname = $1) AS commits,
       wal_records AS records, wal_fpi AS fpi FROM pg_stat_wal`,
    [database],
  );
  const r = rows[0];
  return {
    lsn: r?.lsn ?? "0/0",
    commits: Number(r?.commits ?? 0),
    walRecords: Number(r?.records ?? 0),
    walFpi: Number(r?.fpi ?? 0),
  };
}

/**
 * Rows written so far per table of `schema`, read on a connection of its own that ends at once:
 * a backend hands its statistics over when it exits, so this reading's own transaction is
 * counted before the next reading of the commits, never inside a phase.
 */
async function tableWrites(url: string, schema: string): Promise<Map<string, TableWrites>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{
      table: string;
      indexes: number;
      partial: number;
      ins: string;
      upd: string;
      hot: string;
      del: string;
    }>(
      `SELECT t.relname AS table, (SELECT count(*)::int FROM pg_index i WHERE i.indrelid = t.relid)
         AS indexes, (SELECT count(*)::int FROM pg_index i WHERE i.indrelid = t.relid
           AND i.indpred IS NOT NULL) AS partial, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_hot_upd AS hot, n_tup_del AS del
       FROM pg_stat_user_tables t WHERE schemaname = $1`,
      [schema],
    );
    return new Map(
      rows.map((r) => [
        r.table,
        {
          table: r.table,
          indexes: r.indexes,
          partial: r.partial,
          inserted: Number(r.ins),
          updated: Number(r.upd),
          hot: Number(r.hot),
          deleted: Number(r.del),
        },
      ]),
    );
  } finally {
    await client.end();
  }
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 700));

/**
 * Runs `phase` between two readings of the counters; `pg_stat_statements` is reset first, so the
 * statements are the phase's own. `phase` must close every connection it opened before it
 * resolves: a backend's table and transaction statistics reach shared memory when it exits.
 * `admin` is connected to another database of the cluster than `url`, the workload's.
 */
export async function measurePhase(
  admin: pg.Client,
  url: string,
  schema: string,
  phase: () => Promise<void>,
): Promise<PhaseCost> {
  const database = new URL(url).pathname.slice(1);
  const tablesBefore = await tableWrites(url, schema);
  await settle();
  const before = await counters(admin, database);
  await admin.query("SELECT pg_stat_statements_reset()");
  await phase();
  await settle();
  const { rows } = await admin.query<{
    query: string;
    toplevel: boolean;
    calls: string;
    rows: string;
    total: number;
    blocks: string;
    wal: string;
  }>(
    `SELECT query, toplevel, calls, rows, total_exec_time AS total,
       shared_blks_hit + shared_blks_read AS blocks, wal_bytes AS wal
     FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1)`,
    [database],
  );
  const after = await counters(admin, database);
  const tablesAfter = await tableWrites(url, schema);
  const walBytes = await admin.query<{ d: string }>(
    "SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::bigint AS d",
    [after.lsn, before.lsn],
  );
  const tables: TableWrites[] = [];
  for (const [name, a] of tablesAfter) {
    const b = tablesBefore.get(name);
    const d = {
      table: name,
      indexes: a.indexes,
      partial: a.partial,
      inserted: a.inserted - (b?.inserted ?? 0),
      updated: a.updated - (b?.updated ?? 0),
      hot: a.hot - (b?.hot ?? 0),
      deleted: a.deleted - (b?.deleted ?? 0),
    };
    if (d.inserted + d.updated + d.deleted > 0) tables.push(d);
  }
  return {
    statements: rows.map((r) => ({
      query: r.query,
      toplevel: r.toplevel,
      calls: Number(r.calls),
      rows: Number(r.rows),
      totalMs: r.total,
      sharedBlocks: Number(r.blocks),
      walBytes: Number(r.wal),
    })),
    commits: after.commits - before.commits,
    walBytes: Number(walBytes.rows[0]?.d ?? 0),
    walRecords: after.walRecords - before.walRecords,
    walFpi: after.walFpi - before.walFpi,
    tables: tables.sort((x, y) => x.table.localeCompare(y.table)),
  };
}

/**
 * Index entries written, at most: every insert, and every update that was not HOT, adds one to
 * each full index of its table (and to each partial index whose predicate the new row meets,
 * left out here).
 */
export function indexEntries(t: TableWrites): number {
  return (t.inserted + t.updated - t.hot) * (t.indexes - t.partial);
}
