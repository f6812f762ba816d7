/**
 * Floors: the least work that stores what Rein stores. A floor writes the same number of
 * checkpoints as Rein commits for the same run, each one small row committed on its own, on the
 * same kind of store — so Rein ÷ floor says how much Rein costs beyond its commits.
 *
 * - memory: a minimal superstep loop that serializes each checkpoint (JSON) into a map;
 * - SQLite: one autocommit INSERT per checkpoint on a WAL file with `synchronous=NORMAL` (the
 *   durability both systems run with here);
 * - Postgres: one autocommit INSERT per checkpoint on a fresh database: one round trip and one
 *   commit (one WAL flush) each.
 *
 * How many checkpoints Rein commits is counted, not assumed: {@link countCommits} wraps a saver
 * and counts its `commitStep` calls on an unmeasured run.
 */
import { join } from "node:path";
import type { Checkpointer } from "@rein/core";
import pg from "pg";
import { createFreshDatabase } from "./postgres.ts";
import type { ScenarioContext } from "./scenario.ts";
import { openSqlite } from "./sqlite.ts";
import { SQLITE_SYNCHRONOUS, StoreUnavailableError, type StoreKind } from "./stores.ts";

/** A store of checkpoints that commits each one on its own. */
export interface FloorStore {
  kind: StoreKind;
  /** Stores one checkpoint of `threadId` as one commit. */
  commit(threadId: string, seq: number, state: unknown): Promise<void>;
  /** The newest checkpoint of `threadId` (what a resume has to read first). */
  latest(threadId: string): Promise<unknown>;
  /** Checkpoints committed so far. */
  readonly commits: number;
  close(): Promise<void>;
}

let counter = 0;

/** A memory floor: checkpoints serialized into a map of arrays. */
export function memoryFloor(): FloorStore {
  const threads = new Map<string, string[]>();
  let commits = 0;
  return {
    kind: "memory",
    commit(threadId, _seq, state) {
      let list = threads.get(threadId);
      if (!list) threads.set(threadId, (list = []));
      list.push(JSON.stringify(state));
      commits += 1;
      return Promise.resolve();
    },
    latest(threadId) {
      const list = threads.get(threadId);
      return Promise.resolve(
        list?.length ? (JSON.parse(list[list.length - 1] as string) as unknown) : undefined,
      );
    },
    get commits() {
      return commits;
    },
    close: () => Promise.resolve(),
  };
}

const TABLE = `CREATE TABLE checkpoints (
  thread_id TEXT NOT NULL, seq INTEGER NOT NULL, state TEXT NOT NULL,
  PRIMARY KEY (thread_id, seq))`;

/** A SQLite floor on a fresh WAL file in the context's scratch directory. */
export function sqliteFloor(ctx: Pick<ScenarioContext, "tmpDir">): FloorStore {
  const db = openSqlite(join(ctx.tmpDir, `floor-${process.pid}-${++counter}.db`));
  db.exec("PRAGMA journal_mode = WAL");
  db.exec(`PRAGMA synchronous = ${SQLITE_SYNCHRONOUS}`);
  db.exec(TABLE);
  const insert = db.prepare("INSERT INTO checkpoints (thread_id, seq, state) VALUES (?, ?, ?)");
  const select = db.prepare(
    "SELECT state FROM checkpoints WHERE thread_id = ? ORDER BY seq DESC LIMIT 1",
  );
  let commits = 0;
  return {
    kind: "sqlite",
    commit(threadId, seq, state) {
      // Outside an explicit transaction each statement is its own transaction: one commit.
      insert.run(threadId, seq, JSON.stringify(state));
      commits += 1;
      return Promise.resolve();
    },
    latest(threadId) {
      const text = select.get(threadId)?.["state"];
      return Promise.resolve(typeof text === "string" ? (JSON.parse(text) as unknown) : undefined);
    },
    get commits() {
      return commits;
    },
    close: () => Promise.resolve(void db.close()),
  };
}

/** A Postgres floor on a fresh database (dropped on close), through one connection. */
export async function postgresFloor(ctx: Pick<ScenarioContext, "postgres">): Promise<FloorStore> {
  if (!ctx.postgres.ok) throw new StoreUnavailableError(ctx.postgres.reason);
  const db = await createFreshDatabase(ctx.postgres.url, "floor");
  const client = new pg.Client({ connectionString: db.url });
  try {
    await client.connect();
    await client.query(TABLE);
  } catch (error) {
    await client.end().catch(() => undefined);
    await db.drop();
    throw error;
  }
  let commits = 0;
  return {
    kind: "postgres",
    async commit(threadId, seq, state) {
      // Autocommit: one round trip, one commit.
      await client.query("INSERT INTO checkpoints (thread_id, seq, state) VALUES ($1, $2, $3)", [
        threadId,
        seq,
        JSON.stringify(state),
      ]);
      commits += 1;
    },
    async latest(threadId) {
      const r = await client.query<{ state: string }>(
        "SELECT state FROM checkpoints WHERE thread_id = $1 ORDER BY seq DESC LIMIT 1",
        [threadId],
      );
      return r.rows[0] ? (JSON.parse(r.rows[0].state) as unknown) : undefined;
    },
    get commits() {
      return commits;
    },
    async close() {
      await client.end();
      await db.drop();
    },
  };
}

/** Opens the floor of a store kind. */
export function openFloor(ctx: ScenarioContext, kind: StoreKind): Promise<FloorStore> {
  if (kind === "memory") return Promise.resolve(memoryFloor());
  if (kind === "sqlite") return Promise.resolve(sqliteFloor(ctx));
  return postgresFloor(ctx);
}

/**
 * Store methods that write: on SQLite each is one write transaction, on Postgres one statement
 * (one round trip and one commit).
 */
const WRITE_METHODS = new Set([
  "commitStep",
  "putTaskOutcome",
  "answerInterrupts",
  "putRun",
  "putThread",
  "acquireLease",
  "renewLease",
  "releaseLease",
  "putRequestResult",
  "putOnce",
  "appendAudit",
  "appendSteering",
]);

/** What a saver was asked to do: checkpoints committed, store calls, and how many wrote. */
export interface StoreCallCount {
  commits: number;
  calls: number;
  writes: number;
}

/**
 * The saver, seen through a proxy that counts `commitStep` calls (one per checkpoint), all store
 * calls and the writing ones. For unmeasured runs only: the proxy adds a little work to every
 * call.
 */
export function countCommits(saver: Checkpointer): {
  saver: Checkpointer;
  count(): number;
  calls(): StoreCallCount;
} {
  const counted: StoreCallCount = { commits: 0, calls: 0, writes: 0 };
  const proxy = new Proxy(saver, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function" || typeof property !== "string") return value;
      if (property === "serializer" || property === "close") return value;
      return (...args: unknown[]) => {
        counted.calls += 1;
        if (WRITE_METHODS.has(property)) counted.writes += 1;
        if (property === "commitStep") counted.commits += 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { saver: proxy, count: () => counted.commits, calls: () => ({ ...counted }) };
}
