/**
 * The stores a scenario runs on, for both systems: in memory, a SQLite file in WAL mode, and
 * Postgres on a fresh database per store (dropped on close). Each handle can say how much it
 * holds, measured from outside the saver (see `sizes.ts`).
 */
import { join } from "node:path";
import { MemorySaver as PeerMemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { PostgresSaver as PeerPostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver as PeerSqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { MemorySaver, type Checkpointer } from "@rein/core";
import type * as ReinPostgres from "@rein/postgres";
import { SqliteSaver } from "@rein/sqlite";
import pg from "pg";
import { peerThread } from "./peer.ts";
import { createFreshDatabase } from "./postgres.ts";
import { skipped, type Cell } from "./result.ts";
import type { ScenarioContext } from "./scenario.ts";
import {
  openSqliteProbe,
  postgresDiskBytes,
  postgresLogicalBytes,
  sqliteDiskBytes,
  sqliteLogicalBytes,
} from "./sizes.ts";
import type { Db } from "./sqlite.ts";

/** Where a scenario variant stores its runs. */
export type StoreKind = "memory" | "sqlite" | "postgres";

/** One system's store for one scenario variant. */
export interface StoreHandle<Saver> {
  saver: Saver;
  /** Logical bytes held (sum of stored value lengths); `null` for memory. */
  logicalBytes(): Promise<number | null>;
  /** Bytes on disk; `null` for memory. */
  diskBytes(): Promise<number | null>;
  /** Closes the saver and removes the store (drops the Postgres database). */
  close(): Promise<void>;
}

/** Creates stores of one kind for both systems. */
export interface StoreFactory {
  kind: StoreKind;
  rein(label: string): Promise<StoreHandle<Checkpointer>>;
  peer(label: string): Promise<StoreHandle<BaseCheckpointSaver>>;
}

/** A store that cannot be opened on this machine; its cells become `skipped`, the run goes on. */
export class StoreUnavailableError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "StoreUnavailableError";
  }
}

/** The result of {@link useStore}: the value, or why the store was skipped. */
export type Used<T> = { ok: true; value: T } | { ok: false; cell: Cell };

/**
 * Opens a store, runs `fn` on it and closes it. A {@link StoreUnavailableError} becomes a
 * `skipped` cell; every other error propagates.
 */
export async function useStore<S, T>(
  open: () => Promise<StoreHandle<S>>,
  fn: (store: StoreHandle<S>) => Promise<T>,
): Promise<Used<T>> {
  let store: StoreHandle<S>;
  try {
    store = await open();
  } catch (error) {
    if (error instanceof StoreUnavailableError) return { ok: false, cell: skipped(error.reason) };
    throw error;
  }
  try {
    return { ok: true, value: await fn(store) };
  } finally {
    await store.close();
  }
}

/** SQLite durability used for both systems: WAL with `synchronous=NORMAL`, Rein's default. */
export const SQLITE_SYNCHRONOUS = "NORMAL";

let counter = 0;
const uniqueName = (label: string): string =>
  `${label.replace(/[^a-z0-9-]/gi, "_")}-${process.pid}-${++counter}`;

function memoryHandle<S>(saver: S): StoreHandle<S> {
  return {
    saver,
    logicalBytes: () => Promise.resolve(null),
    diskBytes: () => Promise.resolve(null),
    close: () => Promise.resolve(),
  };
}

function sqliteHandle<S>(
  saver: S,
  path: string,
  closeSaver: () => void | Promise<void>,
): StoreHandle<S> {
  let probe: Db | null = null;
  const open = (): Db => (probe ??= openSqliteProbe(path));
  return {
    saver,
    logicalBytes: () => Promise.resolve(sqliteLogicalBytes(open())),
    diskBytes: () => Promise.resolve(sqliteDiskBytes(open(), path)),
    async close() {
      probe?.close();
      await closeSaver();
    },
  };
}

/** A store on a fresh Postgres database, measured through its own client, dropped on close. */
async function postgresHandle<S>(
  adminUrl: string,
  label: string,
  open: (url: string) => Promise<{ saver: S; close: () => Promise<void> }>,
): Promise<StoreHandle<S>> {
  const db = await createFreshDatabase(adminUrl, label);
  try {
    const { saver, close } = await open(db.url);
    const probe = new pg.Client({ connectionString: db.url });
    await probe.connect();
    return {
      saver,
      logicalBytes: () => postgresLogicalBytes(probe),
      diskBytes: () => postgresDiskBytes(probe),
      async close() {
        await probe.end();
        await close();
        await db.drop();
      },
    };
  } catch (error) {
    await db.drop();
    throw error;
  }
}

/** An idle pooled connection that the server closed; the pool replaces it on next use. */
function ignorePoolError(error: Error): void {
  process.emitWarning(`idle Postgres connection closed: ${error.message}`);
}

/** Store factories for a context: memory and SQLite always, Postgres when reachable. */
export function storeFactory(ctx: ScenarioContext, kind: StoreKind): StoreFactory {
  if (kind === "memory")
    return {
      kind,
      rein: () => Promise.resolve(memoryHandle<Checkpointer>(new MemorySaver())),
      peer: () => Promise.resolve(memoryHandle<BaseCheckpointSaver>(new PeerMemorySaver())),
    };
  if (kind === "sqlite")
    return {
      kind,
      rein(label) {
        const path = join(ctx.tmpDir, `rein-${uniqueName(label)}.db`);
        const saver = new SqliteSaver({ path, synchronous: "normal" });
        return Promise.resolve(sqliteHandle<Checkpointer>(saver, path, () => saver.close()));
      },
      async peer(label) {
        const path = join(ctx.tmpDir, `peer-${uniqueName(label)}.db`);
        // The peer's saver opens the file with its own driver, better-sqlite3.
        const saver = PeerSqliteSaver.fromConnString(path);
        saver.db.pragma(`synchronous = ${SQLITE_SYNCHRONOUS}`);
        // Any call runs the saver's setup: it creates the tables and switches the file to WAL.
        await saver.getTuple(peerThread("setup"));
        return sqliteHandle<BaseCheckpointSaver>(saver, path, () => {
          saver.db.close();
        });
      },
    };
  const target = ctx.postgres;
  if (!target.ok) throw new Error(`Postgres is not available: ${target.reason}`);
  return {
    kind,
    rein: (label) => postgresHandle<Checkpointer>(target.url, `rein_${label}`, openReinPostgres),
    peer: (label) =>
      postgresHandle<BaseCheckpointSaver>(target.url, `peer_${label}`, async (url) => {
        // Same as `PostgresSaver.fromConnString(url)`, with a pool we can give an error listener.
        const pool = new pg.Pool({ connectionString: url });
        pool.on("error", ignorePoolError);
        const saver = new PeerPostgresSaver(pool);
        await saver.setup();
        return { saver, close: () => saver.end() };
      }),
  };
}

/**
 * Rein's Postgres saver on `url` (its migrations run on connect). Loaded lazily, so that a broken
 * or missing `@rein/postgres` skips Rein's Postgres cells instead of the whole benchmark.
 */
async function openReinPostgres(
  url: string,
): Promise<{ saver: Checkpointer; close: () => Promise<void> }> {
  let module: typeof ReinPostgres;
  try {
    module = await import("@rein/postgres");
  } catch (error) {
    throw new StoreUnavailableError(
      `@rein/postgres failed to load (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  const saver = await module.PostgresSaver.connect({ connectionString: url });
  // The saver's own pool has no 'error' listener: an idle connection the server terminates
  // would crash the process (reported as a Rein bug). Listen here so the benchmark survives.
  saver.pool.on("error", ignorePoolError);
  return { saver, close: () => saver.close() };
}
