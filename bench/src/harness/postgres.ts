/**
 * Postgres for the store scenarios: find out whether the server is reachable, and give each
 * scenario run a fresh database that is dropped afterwards.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";

/** The default server; `REIN_BENCH_POSTGRES_URL` overrides it. */
export const DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/test";

/** A reachable server (its admin URL), or the reason Postgres measurements are skipped. */
export type PostgresTarget = { ok: true; url: string } | { ok: false; reason: string };

/** Connects once with a short timeout; a failure becomes a skip reason, not an error. */
export async function probePostgres(
  url: string = process.env.REIN_BENCH_POSTGRES_URL ?? DEFAULT_POSTGRES_URL,
): Promise<PostgresTarget> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return { ok: true, url };
  } catch (error) {
    return {
      ok: false,
      reason: `${url.replace(/:[^:@/]*@/, ":***@")} unreachable (${error instanceof Error ? error.message : String(error)})`,
    };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The URL of database `name` on the same server as `adminUrl`. */
export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A database created for one store, and how to drop it. */
export interface FreshDatabase {
  url: string;
  /** Drops the database (forcibly, so a leaked connection cannot keep it alive). */
  drop(): Promise<void>;
}

async function admin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Drops a database once its connections are gone. `pg.Pool.end()` resolves when it has asked its
 * clients to close, before their backends exit; dropping `WITH (FORCE)` at once would terminate
 * them and the pool would re-emit that as an `'error'` event. So wait (up to 5 s), then force.
 */
async function dropWhenIdle(client: pg.Client, name: string): Promise<void> {
  for (let waited = 0; waited < 5000; waited += 20) {
    const r = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1",
      [name],
    );
    if ((r.rows[0]?.n ?? 0) === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/** Creates a uniquely named database on the server of `adminUrl`. */
export async function createFreshDatabase(adminUrl: string, label: string): Promise<FreshDatabase> {
  const name = `rein_bench_${label.replace(/[^a-z0-9]/gi, "_").toLowerCase()}_${randomBytes(4).toString("hex")}`;
  await admin(adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  return {
    url: databaseUrl(adminUrl, name),
    drop: () => admin(adminUrl, (c) => dropWhenIdle(c, name)),
  };
}
