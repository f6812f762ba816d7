/**
 * Versioned schema migrations of the SQLite store, run on open.
 *
 * Each migration has a number; `schema_migrations` records the ones applied. Opening runs the
 * missing ones in order inside one `BEGIN IMMEDIATE` transaction, so two processes opening the
 * same file at once serialize on the write lock instead of racing, and a crash mid-migration
 * leaves the previous version intact. A file migrated by a newer Rein is refused with
 * {@link SchemaVersionError} rather than misread.
 */
import type { DatabaseSync } from "node:sqlite";
import { SchemaVersionError } from "@rein/core";
import { transactions } from "./driver.ts";
import { LADDER_SCHEMA } from "./ladder-schema.ts";
import { WEBHOOK_SCHEMA } from "./webhook-schema.ts";
import { API_KEYS_SCHEMA } from "./api-keys.ts";
import { LEGACY_SIDE_RECORDS } from "./legacy-side-records.ts";

/**
 * Migration 11: facts about the store itself, one row each. The first is where the audit chain
 * began: the sequence number of the newest line written before it. A file created with the chain
 * records 0, so a line whose chain fields were erased is never taken for one older than the chain
 * (docs/audit.md). A file upgraded from before the chain keeps its unchained lines legacy.
 */
const AUDIT_LEGACY_UNTIL = `
  CREATE TABLE store_settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  INSERT INTO store_settings (key, value) VALUES ('audit_legacy_until', CAST(coalesce(
    (SELECT min(seq) - 1 FROM audit WHERE n IS NOT NULL),
    (SELECT max(seq) FROM audit),
    0) AS TEXT));
`;

/** One schema change. `sql` may hold several statements. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * Migration 10: the graph a thread runs becomes a column. It was a hidden `"rein:graph"` key of the
 * thread's metadata; every row that has the key gets the column from it and loses the key, so no
 * reader ever needs to look in the metadata for it. Metadata is the serializer's JSON (a top-level
 * object with a `__rein` key of its own is escaped as `{"__rein":"obj","v":…}`: both forms).
 */
const THREAD_GRAPH_COLUMN = `
  ALTER TABLE threads ADD COLUMN graph TEXT;
  UPDATE threads SET
    graph = json_extract(metadata, '$."rein:graph"'),
    metadata = json_remove(metadata, '$."rein:graph"')
  WHERE json_valid(metadata) AND json_type(metadata, '$."rein:graph"') = 'text';
  UPDATE threads SET
    graph = json_extract(metadata, '$.v."rein:graph"'),
    metadata = json_remove(metadata, '$.v."rein:graph"')
  WHERE json_valid(metadata) AND json_extract(metadata, '$."__rein"') = 'obj'
    AND json_type(metadata, '$.v."rein:graph"') = 'text';
`;

/** The schema, as an ordered list of migrations. Append new ones; never edit applied ones. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "initial schema",
    sql: `
      CREATE TABLE threads (
        thread_id  TEXT PRIMARY KEY,
        tenant     TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        metadata   TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX threads_by_created ON threads (created_at DESC, thread_id DESC);
      CREATE INDEX threads_by_tenant ON threads (tenant, created_at DESC, thread_id DESC);

      -- The head of each checkpoint stream: the row commitStep compares-and-sets.
      CREATE TABLE heads (
        thread_id     TEXT NOT NULL,
        stream        TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        PRIMARY KEY (thread_id, stream)
      ) WITHOUT ROWID;

      CREATE TABLE checkpoints (
        thread_id  TEXT NOT NULL,
        stream     TEXT NOT NULL,
        id         TEXT NOT NULL,
        parent_id  TEXT,
        run_id     TEXT NOT NULL,
        step       INTEGER NOT NULL,
        source     TEXT NOT NULL,
        created_at TEXT NOT NULL,
        versions   TEXT NOT NULL, -- JSON object: channel -> version
        next       TEXT NOT NULL, -- serialized TaskSpec[]
        metadata   TEXT NOT NULL, -- serialized
        PRIMARY KEY (thread_id, stream, id)
      ) WITHOUT ROWID;

      -- Channel values by version; a delta holds only what was appended since prev.
      CREATE TABLE blobs (
        thread_id TEXT NOT NULL,
        stream    TEXT NOT NULL,
        channel   TEXT NOT NULL,
        version   TEXT NOT NULL,
        kind      TEXT NOT NULL CHECK (kind IN ('full', 'delta')),
        prev      TEXT,
        value     TEXT NOT NULL,
        PRIMARY KEY (thread_id, stream, channel, version)
      ) WITHOUT ROWID;

      CREATE TABLE task_results (
        seq           INTEGER PRIMARY KEY,
        thread_id     TEXT NOT NULL,
        stream        TEXT NOT NULL,
        checkpoint_id TEXT NOT NULL,
        task_id       TEXT NOT NULL,
        kind          TEXT NOT NULL CHECK (kind IN ('writes', 'paused')),
        value         TEXT NOT NULL,
        UNIQUE (thread_id, stream, checkpoint_id, task_id)
      );

      -- Mutable fields (status, answer) are columns; the rest of the record is in 'record'.
      CREATE TABLE interrupts (
        seq         INTEGER PRIMARY KEY,
        id          TEXT NOT NULL UNIQUE,
        thread_id   TEXT NOT NULL,
        run_id      TEXT NOT NULL,
        graph       TEXT NOT NULL,
        tenant      TEXT,
        status      TEXT NOT NULL CHECK (status IN ('pending', 'answered', 'cancelled', 'superseded')),
        created_at  TEXT NOT NULL,
        deadline    TEXT,
        answer      TEXT,
        answered_by TEXT,
        answered_at TEXT,
        record      TEXT NOT NULL
      );
      CREATE INDEX interrupts_queue ON interrupts (status, created_at DESC, id DESC);
      CREATE INDEX interrupts_by_created ON interrupts (created_at DESC, id DESC);
      CREATE INDEX interrupts_by_thread ON interrupts (thread_id, created_at, seq);
      CREATE INDEX interrupts_by_tenant ON interrupts (tenant, status, created_at DESC, id DESC);
      CREATE INDEX interrupts_by_graph ON interrupts (graph, status, created_at DESC, id DESC);
      CREATE INDEX interrupts_by_run ON interrupts (run_id, created_at DESC, id DESC);
      CREATE INDEX interrupts_by_deadline ON interrupts (deadline, id)
        WHERE status = 'pending' AND deadline IS NOT NULL;

      CREATE TABLE runs (
        seq        INTEGER PRIMARY KEY,
        run_id     TEXT NOT NULL UNIQUE,
        thread_id  TEXT NOT NULL,
        created_at TEXT NOT NULL,
        record     TEXT NOT NULL
      );
      CREATE INDEX runs_by_thread ON runs (thread_id, created_at, seq);

      CREATE TABLE steering (
        seq       INTEGER PRIMARY KEY AUTOINCREMENT,
        id        TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        record    TEXT NOT NULL
      );
      CREATE INDEX steering_by_thread ON steering (thread_id, seq);

      -- AUTOINCREMENT: a deleted tail is never reused, so audit cursors stay exact.
      CREATE TABLE audit (
        seq       INTEGER PRIMARY KEY AUTOINCREMENT,
        thread_id TEXT NOT NULL,
        record    TEXT NOT NULL
      );
      CREATE INDEX audit_by_thread ON audit (thread_id, seq);

      CREATE TABLE once_results (
        thread_id TEXT NOT NULL,
        task_id   TEXT NOT NULL,
        key       TEXT NOT NULL,
        value     TEXT NOT NULL,
        PRIMARY KEY (thread_id, task_id, key)
      ) WITHOUT ROWID;

      CREATE TABLE requests (
        request_id TEXT PRIMARY KEY,
        thread_id  TEXT,
        result     TEXT
      ) WITHOUT ROWID;
      CREATE INDEX requests_by_thread ON requests (thread_id);

      CREATE TABLE leases (
        thread_id  TEXT PRIMARY KEY,
        owner      TEXT NOT NULL,
        expires_at INTEGER NOT NULL -- epoch milliseconds
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 2,
    name: "rowid tables for large values",
    // A WITHOUT ROWID table keeps only about 1 KB of a row in its page and spills the rest to an
    // overflow page of its own, so every 1 KB message cost a nearly empty 4 KB page. Rowid tables
    // spill only past ~4 KB. Rows are copied as they are.
    sql: `
      CREATE TABLE blobs_rowid (
        thread_id TEXT NOT NULL,
        stream    TEXT NOT NULL,
        channel   TEXT NOT NULL,
        version   TEXT NOT NULL,
        kind      TEXT NOT NULL CHECK (kind IN ('full', 'delta')),
        prev      TEXT,
        value     TEXT NOT NULL,
        PRIMARY KEY (thread_id, stream, channel, version)
      );
      INSERT INTO blobs_rowid SELECT thread_id, stream, channel, version, kind, prev, value FROM blobs;
      DROP TABLE blobs;
      ALTER TABLE blobs_rowid RENAME TO blobs;

      CREATE TABLE requests_rowid (
        request_id TEXT PRIMARY KEY,
        thread_id  TEXT,
        result     TEXT
      );
      INSERT INTO requests_rowid SELECT request_id, thread_id, result FROM requests;
      DROP TABLE requests;
      ALTER TABLE requests_rowid RENAME TO requests;
      CREATE INDEX requests_by_thread ON requests (thread_id);
    `,
  },
  {
    version: 3,
    name: "fencing tokens and runs by status",
    // A lease row now outlives its release (expired, not deleted) so its token keeps growing.
    // Run status, update time and rootness leave the encoded record for columns the recovery
    // sweep's index can serve.
    sql: `
      ALTER TABLE leases ADD COLUMN token INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE runs ADD COLUMN status TEXT NOT NULL DEFAULT 'running';
      ALTER TABLE runs ADD COLUMN updated_at TEXT NOT NULL DEFAULT '';
      ALTER TABLE runs ADD COLUMN root INTEGER NOT NULL DEFAULT 1;
      UPDATE runs SET
        status = coalesce(json_extract(record, '$.status'), 'running'),
        updated_at = coalesce(json_extract(record, '$.updatedAt'), created_at),
        root = (json_extract(record, '$.parentRunId') IS NULL);
      CREATE INDEX runs_by_status ON runs (status, updated_at, run_id);
    `,
  },
  {
    version: 4,
    name: "interrupts by task",
    // A continuation reads the rows of the tasks it runs, not its run's: answering one of 1,000
    // parallel questions must not read the other 999. The task id leaves the encoded record for a
    // column the index serves (rows written before keep their copy; the column wins on read).
    sql: `
      ALTER TABLE interrupts ADD COLUMN task_id TEXT NOT NULL DEFAULT '';
      UPDATE interrupts SET task_id = coalesce(json_extract(record, '$.taskId'), '');
      CREATE INDEX interrupts_by_task ON interrupts (thread_id, task_id);
    `,
  },
  {
    version: 5,
    name: "interrupts by root graph",
    // The queue's app filter matches the root graph of the run tree, so filtering by the app lists
    // its sub-agents' questions too; `graph` stays the asking run's own graph. Rows written before
    // take the root from their encoded path (`up` above the asking task, or a whole `path` of an
    // older encoding); a row with neither asked in the root run, whose graph is the root.
    sql: `
      ALTER TABLE interrupts ADD COLUMN root_graph TEXT NOT NULL DEFAULT '';
      UPDATE interrupts SET root_graph = coalesce(
        CASE WHEN json_valid(record) THEN coalesce(
          json_extract(record, '$.up[0].graph'), json_extract(record, '$.path[0].graph')) END,
        graph);
      CREATE INDEX interrupts_by_root_graph
        ON interrupts (root_graph, status, created_at DESC, id DESC);
    `,
  },
  {
    version: 6,
    name: "approval policies",
    // Who may answer (resolved when the question was raised) and the approvals gathered so far,
    // each encoded; NULL on older rows, which have no policy.
    sql: `
      ALTER TABLE interrupts ADD COLUMN policy TEXT;
      ALTER TABLE interrupts ADD COLUMN approvals TEXT;
    `,
  },
  {
    version: 7,
    name: "audit hash chain",
    // Each audit line carries its place in its thread's chain, the previous line's hash and its
    // own (see docs/audit.md); lines written before stay unchained and are reported as legacy.
    // Signed heads (HMAC, one per thread) let a verifier tell that a chain's tail was deleted.
    sql: `
      ALTER TABLE audit ADD COLUMN n INTEGER;
      ALTER TABLE audit ADD COLUMN prev_hash TEXT;
      ALTER TABLE audit ADD COLUMN hash TEXT;
      CREATE INDEX audit_chain ON audit (thread_id, n);
      CREATE TABLE audit_seals (
        thread_id TEXT PRIMARY KEY,
        n         INTEGER NOT NULL,
        hash      TEXT NOT NULL,
        mac       TEXT NOT NULL,
        sealed_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 8,
    name: "webhook outbox",
    sql: WEBHOOK_SCHEMA,
  },
  {
    version: 9,
    name: "escalation ladder",
    sql: LADDER_SCHEMA,
  },
  {
    version: 10,
    name: "thread graph column",
    sql: THREAD_GRAPH_COLUMN,
  },
  {
    version: 11,
    name: "where the audit chain began",
    sql: AUDIT_LEGACY_UNTIL,
  },
  {
    version: 12,
    name: "api keys",
    sql: API_KEYS_SCHEMA,
  },
  {
    version: 13,
    name: "side records",
    // A feature's own records (capability `sideRecords`). The tenant is stored as '' with
    // has_tenant 0 for none, so the primary key needs no NULL; expires_at is epoch ms (NULL:
    // never), thread_id the thread whose deletion deletes the record.
    sql: `
      CREATE TABLE side_records (
        has_tenant INTEGER NOT NULL,
        tenant     TEXT NOT NULL,
        kind       TEXT NOT NULL,
        key        TEXT NOT NULL,
        value      TEXT NOT NULL,
        expires_at INTEGER,
        thread_id  TEXT,
        PRIMARY KEY (has_tenant, tenant, kind, key)
      ) WITHOUT ROWID;
      CREATE INDEX side_records_thread ON side_records (thread_id) WHERE thread_id IS NOT NULL;
    `,
  },
  {
    version: 14,
    name: "pending interrupts by thread",
    // A thread's pending questions, oldest first, and nothing else: the count and the first page
    // an answer reads walk only these entries (the thread index also holds every answered
    // question, and checking each entry's status cost a table read per row). An answer removes
    // its entry, so the index holds only what waits.
    sql: `
      CREATE INDEX interrupts_pending_by_thread ON interrupts (thread_id, created_at, seq)
        WHERE status = 'pending';
    `,
  },
  {
    version: 15,
    name: "side records from once slots",
    // What an earlier server kept in once slots becomes the side records the server reads now,
    // so it no longer looks in both (see legacy-side-records.ts).
    sql: LEGACY_SIDE_RECORDS,
  },
  {
    version: 16,
    name: "paused task results by step",
    // Whether a step still has a paused task, read after every answer: found in the first entry
    // of this index instead of by reading the step's result rows (1,000 when 1,000 tasks wait).
    // An answer deletes its task's paused row, so the index holds only what waits.
    sql: `
      CREATE INDEX task_results_paused ON task_results (thread_id, stream, checkpoint_id)
        WHERE kind = 'paused';
    `,
  },
];

/** The newest schema version this code knows. */
export const SCHEMA_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

/** The schema version recorded in the database (0 for a fresh file). */
export function schemaVersion(db: DatabaseSync): number {
  const table = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
    .get();
  if (!table) return 0;
  const row = db.prepare("SELECT max(version) AS version FROM schema_migrations").get();
  return typeof row?.["version"] === "number" ? row["version"] : 0;
}

/**
 * Brings the database to the newest version of `migrations`, atomically.
 *
 * @returns the versions applied by this call (empty when already current).
 * @throws {SchemaVersionError} when the database is newer than `migrations` know.
 */
export function migrate(db: DatabaseSync, migrations: readonly Migration[] = MIGRATIONS): number[] {
  const known = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  // IMMEDIATE takes the write lock up front: a second process waits (busy_timeout), then sees
  // the migrations already applied.
  return transactions(db).immediate(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    INTEGER PRIMARY KEY,
      name       TEXT NOT NULL,
      applied_at TEXT NOT NULL
    )`);
    const current = schemaVersion(db);
    if (current > known) throw new SchemaVersionError(current, known);
    const record = db.prepare(
      "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
    );
    const applied: number[] = [];
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (migration.version <= current) continue;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, new Date().toISOString());
      applied.push(migration.version);
    }
    return applied;
  });
}
