/**
 * Versioned schema migrations of the Postgres store, in a schema of its own.
 *
 * `schema_migrations` (in that schema) records the versions applied. {@link migrate} runs the
 * missing ones in one transaction holding a transaction-scoped advisory lock keyed by the schema
 * name, so two processes starting at once serialize instead of racing on `CREATE TABLE`, and a
 * failure leaves the previous version intact (Postgres DDL is transactional). A schema migrated
 * by a newer Rein is refused with {@link SchemaVersionError}.
 */
import type { Pool } from "pg";
import { guarded, storeError } from "./connection.ts";
import { SchemaVersionError } from "@rein/core";

/** One schema change. `sql` receives the quoted schema name and may hold several statements. */
export interface Migration {
  version: number;
  name: string;
  sql: (schema: string) => string;
}

/** Text columns that are compared or ordered use the "C" collation: byte order, like JS. */
const KEY = 'text COLLATE "C"';

/** The schema, as an ordered list of migrations. Append new ones; never edit applied ones. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "initial schema",
    sql: (s) => `
      CREATE TABLE ${s}.threads (
        thread_id  ${KEY} PRIMARY KEY,
        tenant     ${KEY},
        created_at ${KEY} NOT NULL,
        updated_at text NOT NULL,
        metadata   text NOT NULL
      );
      CREATE INDEX threads_by_created ON ${s}.threads (created_at DESC, thread_id DESC);
      CREATE INDEX threads_by_tenant ON ${s}.threads (tenant, created_at DESC, thread_id DESC);

      -- The head of each checkpoint stream: the row commitStep compares-and-sets (row lock).
      CREATE TABLE ${s}.heads (
        thread_id     ${KEY} NOT NULL,
        stream        ${KEY} NOT NULL,
        checkpoint_id ${KEY} NOT NULL,
        PRIMARY KEY (thread_id, stream)
      );

      CREATE TABLE ${s}.checkpoints (
        thread_id  ${KEY} NOT NULL,
        stream     ${KEY} NOT NULL,
        id         ${KEY} NOT NULL,
        parent_id  ${KEY},
        run_id     ${KEY} NOT NULL,
        step       integer NOT NULL,
        source     text NOT NULL,
        created_at text NOT NULL,
        versions   jsonb NOT NULL,
        next       text NOT NULL,
        metadata   text NOT NULL,
        PRIMARY KEY (thread_id, stream, id)
      );

      -- Channel values by version; a delta holds only what was appended since prev.
      CREATE TABLE ${s}.blobs (
        thread_id ${KEY} NOT NULL,
        stream    ${KEY} NOT NULL,
        channel   ${KEY} NOT NULL,
        version   ${KEY} NOT NULL,
        kind      text NOT NULL CHECK (kind IN ('full', 'delta')),
        prev      ${KEY},
        value     text NOT NULL,
        PRIMARY KEY (thread_id, stream, channel, version)
      );

      CREATE TABLE ${s}.task_results (
        seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        thread_id     ${KEY} NOT NULL,
        stream        ${KEY} NOT NULL,
        checkpoint_id ${KEY} NOT NULL,
        task_id       ${KEY} NOT NULL,
        kind          text NOT NULL CHECK (kind IN ('writes', 'paused')),
        value         text NOT NULL,
        UNIQUE (thread_id, stream, checkpoint_id, task_id)
      );

      -- Mutable fields (status, answer) are columns; the rest of the record is in 'record'.
      CREATE TABLE ${s}.interrupts (
        seq         bigint GENERATED ALWAYS AS IDENTITY,
        id          ${KEY} PRIMARY KEY,
        thread_id   ${KEY} NOT NULL,
        run_id      ${KEY} NOT NULL,
        graph       ${KEY} NOT NULL,
        tenant      ${KEY},
        status      text NOT NULL
                    CHECK (status IN ('pending', 'answered', 'cancelled', 'superseded')),
        created_at  ${KEY} NOT NULL,
        deadline    ${KEY},
        answer      text,
        answered_by text,
        answered_at text,
        record      text NOT NULL
      );
      CREATE INDEX interrupts_queue ON ${s}.interrupts (status, created_at DESC, id DESC);
      CREATE INDEX interrupts_by_created ON ${s}.interrupts (created_at DESC, id DESC);
      CREATE INDEX interrupts_by_thread ON ${s}.interrupts (thread_id, created_at, seq);
      CREATE INDEX interrupts_by_tenant
        ON ${s}.interrupts (tenant, status, created_at DESC, id DESC);
      CREATE INDEX interrupts_by_graph ON ${s}.interrupts (graph, status, created_at DESC, id DESC);
      CREATE INDEX interrupts_by_run ON ${s}.interrupts (run_id, created_at DESC, id DESC);
      CREATE INDEX interrupts_by_deadline ON ${s}.interrupts (deadline, id)
        WHERE status = 'pending' AND deadline IS NOT NULL;

      CREATE TABLE ${s}.runs (
        seq        bigint GENERATED ALWAYS AS IDENTITY,
        run_id     ${KEY} PRIMARY KEY,
        thread_id  ${KEY} NOT NULL,
        created_at ${KEY} NOT NULL,
        record     text NOT NULL
      );
      CREATE INDEX runs_by_thread ON ${s}.runs (thread_id, created_at, seq);

      CREATE TABLE ${s}.steering (
        seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id        text NOT NULL,
        thread_id ${KEY} NOT NULL,
        record    text NOT NULL
      );
      CREATE INDEX steering_by_thread ON ${s}.steering (thread_id, seq);

      CREATE TABLE ${s}.audit (
        seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        thread_id ${KEY} NOT NULL,
        record    text NOT NULL
      );
      CREATE INDEX audit_by_thread ON ${s}.audit (thread_id, seq);

      CREATE TABLE ${s}.once_results (
        thread_id ${KEY} NOT NULL,
        task_id   ${KEY} NOT NULL,
        key       ${KEY} NOT NULL,
        value     text NOT NULL,
        PRIMARY KEY (thread_id, task_id, key)
      );

      CREATE TABLE ${s}.requests (
        request_id ${KEY} PRIMARY KEY,
        thread_id  ${KEY},
        result     text
      );
      CREATE INDEX requests_by_thread ON ${s}.requests (thread_id);

      CREATE TABLE ${s}.leases (
        thread_id  ${KEY} PRIMARY KEY,
        owner      text NOT NULL,
        expires_at timestamptz NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: "unlogged leases",
    // A lease is worth nothing after a server crash (its owner is gone too), so it needs no WAL:
    // taking and releasing one then costs no disk flush, two fewer per run.
    sql: (s) => `ALTER TABLE ${s}.leases SET UNLOGGED`,
  },
  {
    version: 3,
    name: "fencing tokens and runs by status",
    // Tokens come from a (logged) sequence: the unlogged lease table is emptied by a server
    // crash, and a token handed out afterwards must still exceed every earlier one. Run status,
    // update time and rootness get columns the recovery sweep's index can serve.
    sql: (s) => `
      CREATE SEQUENCE ${s}.lease_tokens;
      ALTER TABLE ${s}.leases ADD COLUMN token bigint NOT NULL DEFAULT 0;
      ALTER TABLE ${s}.runs
        ADD COLUMN status text NOT NULL DEFAULT 'running',
        ADD COLUMN updated_at text NOT NULL DEFAULT '',
        ADD COLUMN root boolean NOT NULL DEFAULT true;
      UPDATE ${s}.runs SET
        status = coalesce(record::jsonb ->> 'status', 'running'),
        updated_at = coalesce(record::jsonb ->> 'updatedAt', created_at),
        root = coalesce(jsonb_typeof(record::jsonb -> 'parentRunId'), 'null') = 'null';
      CREATE INDEX runs_by_status ON ${s}.runs (status, updated_at, run_id);
    `,
  },
  {
    version: 4,
    name: "interrupts by task",
    // A continuation reads the rows of the tasks it runs, not its run's: answering one of 1,000
    // parallel questions must not read the other 999. The task id leaves the encoded record for a
    // column the index serves (rows written before keep their copy; the column wins on read).
    sql: (s) => `
      ALTER TABLE ${s}.interrupts ADD COLUMN task_id text NOT NULL DEFAULT '';
      UPDATE ${s}.interrupts SET task_id = coalesce(record::jsonb ->> 'taskId', '');
      CREATE INDEX interrupts_by_task ON ${s}.interrupts (thread_id, task_id);
    `,
  },
  {
    version: 5,
    name: "interrupts by root graph",
    // The queue's app filter matches the root graph of the run tree, so filtering by the app lists
    // its sub-agents' questions too; `graph` stays the asking run's own graph. Rows written before
    // take the root from their encoded path (`up` above the asking task, or a whole `path` of
    // an older encoding); a row with neither asked in the root run, whose graph is the root.
    sql: (s) => `
      ALTER TABLE ${s}.interrupts ADD COLUMN root_graph text NOT NULL DEFAULT '';
      UPDATE ${s}.interrupts SET root_graph = coalesce(
        record::jsonb -> 'up' -> 0 ->> 'graph', record::jsonb -> 'path' -> 0 ->> 'graph', graph);
      CREATE INDEX interrupts_by_root_graph
        ON ${s}.interrupts (root_graph, status, created_at DESC, id DESC);
    `,
  },
];

/** The newest schema version this code knows. */
export const SCHEMA_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

/** Quotes a schema name for SQL, refusing names that would need more than plain quoting. */
export function quoteSchema(schema: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
    throw new Error(
      `Invalid Postgres schema name ${JSON.stringify(schema)}: use letters, digits and _.`,
    );
  }
  return `"${schema}"`;
}

/**
 * Brings `schema` to the newest version of `migrations`, creating it if needed.
 *
 * @returns the versions applied by this call (empty when already current).
 * @throws {SchemaVersionError} when the schema is newer than `migrations` know.
 */
export async function migrate(
  pool: Pool,
  schema: string,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  const s = quoteSchema(schema);
  const known = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  const client = await guarded(() => pool.connect());
  // A connection dropped while checked out emits 'error' on the client; unheard, that kills
  // the process. The query in flight rejects as well, which is what the caller sees.
  let broken: Error | undefined;
  const onError = (error: Error): void => {
    broken = error;
  };
  client.on("error", onError);
  try {
    await client.query("BEGIN");
    // Held until COMMIT/ROLLBACK: concurrent migrators of this schema wait here, then find the
    // work done. Other schemas use other keys and do not wait.
    await client.query("SELECT pg_advisory_xact_lock(hashtext('rein.migrate'), hashtext($1))", [
      schema,
    ]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.schema_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const current = await client.query<{ version: number | null }>(
      `SELECT max(version) AS version FROM ${s}.schema_migrations`,
    );
    const version = current.rows[0]?.version ?? 0;
    if (version > known) throw new SchemaVersionError(version, known);
    const applied: number[] = [];
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (migration.version <= version) continue;
      await client.query(migration.sql(s));
      await client.query(`INSERT INTO ${s}.schema_migrations (version, name) VALUES ($1, $2)`, [
        migration.version,
        migration.name,
      ]);
      applied.push(migration.version);
    }
    await client.query("COMMIT");
    return applied;
  } catch (error) {
    // A rollback on a dead connection fails too; the first error is the one to report.
    await client.query("ROLLBACK").catch((rollback: unknown) => {
      broken ??= rollback instanceof Error ? rollback : new Error(String(rollback));
    });
    throw storeError(error);
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}

/** The schema version recorded in `schema` (0 when it has none). */
export async function schemaVersion(pool: Pool, schema: string): Promise<number> {
  const exists = await pool.query<{ table: string | null }>("SELECT to_regclass($1) AS table", [
    `${quoteSchema(schema)}.schema_migrations`,
  ]);
  if (!exists.rows[0]?.table) return 0;
  const result = await pool.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${quoteSchema(schema)}.schema_migrations`,
  );
  return result.rows[0]?.version ?? 0;
}
