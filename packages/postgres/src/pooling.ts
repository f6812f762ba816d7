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
 * PgBouncer (`pgbouncer=true`, which is taken out of the URL the driver sees); a URL naming
 * several hosts connects to them in turn ({@link hostList}).
 */
export function storePool(url: string | undefined, statements: StatementMode | undefined): pg.Pool {
  const { connectionString, pooled } =
    url === undefined ? { connectionString: url, pooled: false } : pooledUrl(url);
  const unnamed = (statements ?? (pooled ? "unnamed" : "named")) === "unnamed";
  const Client = unnamed ? UnnamedStatementClient : pg.Client;
  const hosts = connectionString === undefined ? null : hostList(connectionString);
  if (!hosts) return new pg.Pool({ connectionString, Client });
  const pool = new pg.Pool({
    connectionString: hosts.urls[0],
    Client: multiHostClient(hosts, Client),
  });
  return tryEveryHost(pool, hosts.urls.length);
}

/**
 * Makes a pool of {@link multiHostClient}s try each host once per checkout: a connection the
 * first host refuses (the old primary after a failover) is retried on the next, so a query sees
 * a failover as a slower connect, not as an error.
 */
function tryEveryHost(pool: pg.Pool, hosts: number): pg.Pool {
  const connect = Reflect.get(pg.Pool.prototype, "connect") as unknown as (
    this: pg.Pool,
  ) => Promise<pg.PoolClient>;
  const checkout = async (): Promise<pg.PoolClient> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await connect.call(pool);
      } catch (error) {
        if (attempt >= hosts) throw error;
      }
    }
  };
  pool.connect = function (
    callback?: (error: Error | undefined, client?: pg.PoolClient, done?: () => void) => void,
  ) {
    const done = checkout();
    if (!callback) return done;
    done.then(
      (client) => callback(undefined, client, () => client.release()),
      (error: Error) => callback(error),
    );
    return undefined;
  } as pg.Pool["connect"];
  return pool;
}

/** Per host list (its URLs joined), the index of the host to try first. */
const reached = new Map<string, number>();

/** The hosts of a multi-host URL, each as a URL of its own, and whether only a primary will do. */
export interface HostList {
  urls: string[];
  /** `target_session_attrs=read-write` (or `primary`): a standby is skipped. */
  readWrite: boolean;
}

/**
 * The hosts of a libpq-style multi-host URL
 * (`postgres://user@db-a:5432,db-b:5432/app?target_session_attrs=read-write`), which `pg` 8 does
 * not parse; null for a URL with one host.
 */
export function hostList(url: string): HostList | null {
  const match = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)([^?#]*)(?:\?([^#]*))?$/.exec(url);
  const [, scheme, user = "", hosts = "", path = "", query = ""] = match ?? [];
  if (!scheme || !hosts.includes(",")) return null;
  const params = new URLSearchParams(query);
  const attrs = params.get("target_session_attrs");
  params.delete("target_session_attrs");
  const rest = params.size > 0 ? `${path}?${params.toString()}` : path;
  return {
    urls: hosts.split(",").map((host) => `${scheme}${user}${host}${rest}`),
    readWrite: attrs === "read-write" || attrs === "primary",
  };
}

/**
 * A client class that connects to the hosts of `list` in turn, as libpq does for a multi-host
 * URL: each new connection goes to the host the last one reached (remembered per host list in
 * this process, so every pool on it agrees); a host that refuses, or is a standby when
 * `readWrite`, moves the next attempt to the next host. So after a failover the
 * pool's first attempts fail (the caller sees a retryable error) and the next ones reach the new
 * primary.
 */
export function multiHostClient(list: HostList, base: typeof pg.Client): typeof pg.Client {
  const key = list.urls.join(",");
  const connect = Reflect.get(base.prototype, "connect") as unknown as (
    this: pg.Client,
  ) => Promise<void>;
  class MultiHostClient extends base {
    /** Which host this client connects to. */
    readonly hostIndex: number;
    constructor(config?: pg.ClientConfig) {
      const index = (reached.get(key) ?? 0) % list.urls.length;
      super({ ...config, connectionString: list.urls[index] });
      this.hostIndex = index;
    }
  }
  async function attempt(client: MultiHostClient): Promise<void> {
    try {
      await connect.call(client);
      if (!list.readWrite) return;
      const { rows } = await client.query<{ standby: boolean }>(
        "SELECT pg_is_in_recovery() AS standby",
      );
      if (rows[0]?.standby) {
        await client.end().catch(() => undefined);
        throw new Error(
          `${list.urls[client.hostIndex]?.replace(/\/\/[^@/]*@/, "//")} is a standby and the URL asks for a primary (target_session_attrs=read-write)`,
        );
      }
    } catch (error) {
      if ((reached.get(key) ?? 0) === client.hostIndex)
        reached.set(key, (client.hostIndex + 1) % list.urls.length);
      throw error;
    }
  }
  MultiHostClient.prototype.connect = function (
    this: MultiHostClient,
    callback?: (error?: Error) => void,
  ) {
    const done = attempt(this);
    if (!callback) return done;
    done.then(
      () => callback(),
      (error: Error) => callback(error),
    );
    return undefined;
  } as pg.Client["connect"];
  return MultiHostClient;
}
