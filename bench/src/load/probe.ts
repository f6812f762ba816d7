/**
 * A connection of the load test's own to the server's store, beside the servers: counts
 * interrupts and audit lines, and finds a row at an offset of the queue. The same SQL runs on
 * SQLite and on Postgres (whose connection gets the schema as its search path).
 */
import pg from "pg";
import { openSqlite } from "../harness/sqlite.ts";
import type { ServerStore } from "./server.ts";

/** Read-only SQL on the store, with no parameters. */
export interface StoreProbe {
  rows<Row>(sql: string): Promise<Row[]>;
  close(): Promise<void>;
}

/** Opens a probe on a SQLite file (WAL: reads do not block the server) or a Postgres schema. */
export async function openProbe(store: ServerStore): Promise<StoreProbe> {
  if (store.kind === "sqlite") {
    const db = openSqlite(store.path, { mustExist: true });
    db.exec("PRAGMA busy_timeout = 10000");
    return {
      rows: <Row>(sql: string) => Promise.resolve(db.prepare(sql).all() as Row[]),
      close: () => Promise.resolve(void db.close()),
    };
  }
  const client = new pg.Client({ connectionString: store.url });
  await client.connect();
  await client.query(`SET search_path TO "${store.schema}"`);
  return {
    rows: async <Row>(sql: string) => (await client.query(sql)).rows as Row[],
    close: () => client.end(),
  };
}

/** The one number of a `SELECT count(*) AS n …`. */
export async function count(probe: StoreProbe, sql: string): Promise<number> {
  const rows = await probe.rows<{ n: number | string }>(sql);
  return Number(rows[0]?.n ?? 0);
}
