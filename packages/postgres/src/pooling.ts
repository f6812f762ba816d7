/**
 * Running behind a transaction-mode pooler (PgBouncer, most hosted Postgres): each transaction
 * may run on a different server connection, so nothing may rely on a connection's session. The
 * store keeps no session state on its data connections (no `SET`, no session advisory locks, no
 * `LISTEN`: its migration lock is transaction-scoped); the one thing left is the driver's named
 * prepared statements, which live on the server connection that parsed them. With
 * `statements: "unnamed"` every statement is sent as an unnamed one (parse, bind and execute in
 * one sync), which any pooler passes.
 */
import pg from "pg";

/** How the store sends its statements: named (prepared once per connection) or unnamed. */
export type StatementMode = "named" | "unnamed";

/** The URL parameter that says the URL points at a transaction-mode pooler. */
export const POOLED_URL_PARAM = "pgbouncer";

/**
 * A connection URL without the `pgbouncer` parameter, and whether it said `pgbouncer=true`
 * (the convention other Postgres tools use for a URL that goes through PgBouncer). The parameter
 * is removed because the driver would otherwise pass it on to the server.
 */
export function pooledUrl(url: string): { connectionString: string; pooled: boolean } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { connectionString: url, pooled: false };
  }
  const flag = parsed.searchParams.get(POOLED_URL_PARAM);
  if (flag === null) return { connectionString: url, pooled: false };
  parsed.searchParams.delete(POOLED_URL_PARAM);
  return { connectionString: parsed.toString(), pooled: flag === "true" || flag === "1" };
}

/** A query config without its statement name: the driver then sends an unnamed statement. */
function unnamed(config: unknown): unknown {
  if (typeof config !== "object" || config === null || !("name" in config)) return config;
  const { name: _name, ...rest } = config as { name?: unknown };
  return rest;
}

/**
 * A `pg` client that sends every statement unnamed. Give it to a pool of your own
 * (`new pg.Pool({ connectionString, Client: UnnamedStatementClient })`) that goes through a
 * transaction-mode pooler; `PostgresSaver` uses it itself with `statements: "unnamed"`.
 */
export class UnnamedStatementClient extends pg.Client {}
// Overridden on the prototype: `query` has a dozen overloads a subclass method would have to
// restate; this keeps them all and only drops the name.
UnnamedStatementClient.prototype.query = function query(
  this: pg.Client,
  config: unknown,
  ...rest: unknown[]
) {
  const query = Reflect.get(pg.Client.prototype, "query") as (
    this: pg.Client,
    ...args: unknown[]
  ) => unknown;
  return query.call(this, unnamed(config), ...rest);
} as pg.Client["query"];

/**
 * The pool a saver creates: unnamed statements when asked, or when the URL says it goes through
 * PgBouncer (`pgbouncer=true`, which is taken out of the URL the driver sees).
 */
export function storePool(url: string | undefined, statements: StatementMode | undefined): pg.Pool {
  const { connectionString, pooled } =
    url === undefined ? { connectionString: url, pooled: false } : pooledUrl(url);
  const unnamed = (statements ?? (pooled ? "unnamed" : "named")) === "unnamed";
  return new pg.Pool({ connectionString, ...(unnamed ? { Client: UnnamedStatementClient } : {}) });
}
