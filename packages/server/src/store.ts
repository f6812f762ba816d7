/**
 * Opening the store a server or worker runs on: a SQLite file (the default) or Postgres.
 */
import type { Checkpointer } from "@rein/core";
import type { BackgroundLog } from "./background.ts";
import {
  PostgresSaver,
  SCHEMA_VERSION as POSTGRES_VERSION,
  hostList,
  pooledUrl,
  schemaVersion as postgresVersion,
} from "@rein/postgres";
import {
  SqliteSaver,
  SCHEMA_VERSION as SQLITE_VERSION,
  schemaVersion as sqliteVersion,
} from "@rein/sqlite";
import type { SchemaStatus } from "./readiness.ts";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";

/** Where the store is. */
export type StoreOptions =
  | {
      postgres: string;
      schema?: string | undefined;
      /** A direct URL for LISTEN (`--listen-url` / `REIN_LISTEN_URL`), see {@link listenUrlOf}. */
      listenUrl?: string | undefined;
    }
  | { db: string };

/** An open store and its kind. */
export interface OpenedStore {
  store: Checkpointer;
  kind: "sqlite" | "postgres";
  /**
   * The Postgres saver and its URL when `kind` is `postgres` (for scale-out), with the URL the
   * process LISTENs on, or null when it must not LISTEN (see {@link listenUrlOf}).
   */
  postgres: { saver: PostgresSaver; url: string; listenUrl: string | null } | null;
  /** Where, with any password masked. */
  where: string;
  /** How `/readyz` reads the store's schema version against this build's (its migrations check). */
  schema: SchemaStatus;
}

/**
 * Where this process LISTENs for the other processes' notices: the direct URL it was given
 * (`--listen-url` / `REIN_LISTEN_URL`), else the store's own URL — unless that goes through a
 * transaction-mode pooler (`pgbouncer=true`), which cannot carry LISTEN (the session that
 * listens is handed to other clients between transactions), or names several hosts (the
 * listening client takes one URL): then null, and the process finds other processes' work with
 * its periodic sweep instead.
 */
export function listenUrlOf(options: {
  postgres: string;
  listenUrl?: string | undefined;
}): string | null {
  const direct = options.listenUrl ?? (process.env["REIN_LISTEN_URL"] || undefined);
  if (direct !== undefined) return pooledUrl(direct).connectionString;
  const { connectionString, pooled } = pooledUrl(options.postgres);
  return pooled || hostList(connectionString) ? null : options.postgres;
}

/** A Postgres URL with its password masked; a multi-host URL is not a WHATWG URL, so by pattern. */
function maskPassword(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:@/]*):[^@/]*@/, "$1:***@");
}

/**
 * Opens (and migrates) the store. On Postgres, `log` hears of pooled connections the server
 * closed (a restart, `pg_terminate_backend`): the pool replaces them on next use.
 */
export async function openStore(options: StoreOptions, log?: BackgroundLog): Promise<OpenedStore> {
  if ("postgres" in options) {
    const store = await PostgresSaver.connect({
      connectionString: options.postgres,
      ...(options.schema ? { schema: options.schema } : {}),
      onIdleError: (error) =>
        log?.warn(
          { err: error },
          "postgres: an idle pooled connection was closed; it is replaced on next use",
        ),
    });
    return {
      store,
      kind: "postgres",
      schema: {
        have: () => postgresVersion(store.pool, store.schema),
        need: POSTGRES_VERSION,
      },
      where: maskPassword(options.postgres),
      postgres: { saver: store, url: options.postgres, listenUrl: listenUrlOf(options) },
    };
  }
  mkdirSync(dirname(options.db), { recursive: true });
  const store = SqliteSaver.open(options.db);
  return {
    store,
    kind: "sqlite",
    where: options.db,
    postgres: null,
    schema: { have: () => Promise.resolve(sqliteVersion(store.db)), need: SQLITE_VERSION },
  };
}
