/**
 * Opening the store a server or worker runs on: a SQLite file (the default) or Postgres.
 */
import type { Checkpointer } from "@rein/core";
import type { BackgroundLog } from "./background.ts";
import { PostgresSaver } from "@rein/postgres";
import { SqliteSaver } from "@rein/sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";

/** Where the store is. */
export type StoreOptions = { postgres: string; schema?: string | undefined } | { db: string };

/** An open store and its kind. */
export interface OpenedStore {
  store: Checkpointer;
  kind: "sqlite" | "postgres";
  /** The Postgres saver and its URL when `kind` is `postgres` (for scale-out). */
  postgres: { saver: PostgresSaver; url: string } | null;
  /** Where, with any password masked. */
  where: string;
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
    const url = new URL(options.postgres);
    if (url.password) url.password = "***";
    return {
      store,
      kind: "postgres",
      where: url.toString(),
      postgres: { saver: store, url: options.postgres },
    };
  }
  mkdirSync(dirname(options.db), { recursive: true });
  return { store: SqliteSaver.open(options.db), kind: "sqlite", where: options.db, postgres: null };
}
