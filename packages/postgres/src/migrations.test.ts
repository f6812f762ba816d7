import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { SchemaVersionError, jsonSerializer } from "@rein/core";
import type { StoredInterrupt } from "@rein/core/store";
import { legacySideRecordCase, taskId, threadId, treeInterrupts } from "@rein/core/testing";
import { RowCodec } from "./codec.ts";
import {
  MIGRATIONS,
  SCHEMA_VERSION,
  migrate,
  schemaVersion,
  type Migration,
} from "./migrations.ts";
import { PostgresSaver } from "./saver.ts";
import { probePostgres, redactUrl, testSchemaName } from "./testing.ts";

const probe = await probePostgres();

const notes: Migration = {
  version: 1,
  name: "notes",
  sql: (s) => `CREATE TABLE ${s}.notes (id serial PRIMARY KEY, text text NOT NULL)`,
};
const notesAuthor: Migration = {
  version: 2,
  name: "notes author",
  sql: (s) => `ALTER TABLE ${s}.notes ADD COLUMN author text NOT NULL DEFAULT 'unknown'`,
};

/** A root question and two sub-agent questions of one support-desk tree. */
const OLD_ROWS: StoredInterrupt[] = treeInterrupts();

describe.skipIf(!probe.available)(`Postgres migrations at ${redactUrl(probe.url)}`, () => {
  const schemas: string[] = [];
  const pools: pg.Pool[] = [];
  function freshSchema(): string {
    const schema = testSchemaName();
    schemas.push(schema);
    return schema;
  }
  function pool(): pg.Pool {
    const created = new pg.Pool({ connectionString: probe.url });
    pools.push(created);
    return created;
  }
  afterEach(async () => {
    const admin = pool();
    for (const schema of schemas.splice(0)) {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
    await Promise.all(pools.splice(0).map((p) => p.end()));
  });

  it("setup creates the schema at the newest version", async () => {
    const schema = freshSchema();
    const saver = await PostgresSaver.connect({ pool: pool(), schema });
    expect(await schemaVersion(saver.pool, schema)).toBe(SCHEMA_VERSION);
    const tables = await saver.pool.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1",
      [schema],
    );
    expect(tables.rows.map((r) => r.table_name).sort()).toEqual(
      [
        "api_keys",
        "audit",
        "audit_heads",
        "audit_seals",
        "blobs",
        "checkpoints",
        "heads",
        "interrupts",
        "leases",
        "once_results",
        "requests",
        "runs",
        "schema_migrations",
        "side_records",
        "steering",
        "store_settings",
        "task_results",
        "threads",
        "webhook_attempts",
        "webhook_deliveries",
        "webhook_events",
        "webhook_subscriptions",
      ].sort(),
    );
  });

  it("several processes setting up one fresh schema at once apply each migration once", async () => {
    const schema = freshSchema();
    // Separate pools: separate sessions racing for the advisory lock, as separate processes would.
    const savers = Array.from({ length: 4 }, () => new PostgresSaver({ pool: pool(), schema }));
    await Promise.all(savers.map((s) => s.setup()));
    const applied = await pool().query<{ version: number }>(
      `SELECT version FROM "${schema}".schema_migrations ORDER BY version`,
    );
    expect(applied.rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
  });

  it("setting up an existing schema applies nothing and keeps its data", async () => {
    const schema = freshSchema();
    const shared = pool();
    const first = await PostgresSaver.connect({ pool: shared, schema });
    await first.putOnce(threadId("t1"), taskId("task"), "k", "kept");
    expect(await migrate(shared, schema)).toEqual([]);
    const second = await PostgresSaver.connect({ pool: shared, schema });
    expect(await second.getOnce(threadId("t1"), taskId("task"), "k")).toEqual({ value: "kept" });
  });

  it("a schema at an older version is upgraded in order, keeping its rows", async () => {
    const schema = freshSchema();
    const shared = pool();
    expect(await migrate(shared, schema, [notes])).toEqual([1]);
    await shared.query(`INSERT INTO "${schema}".notes (text) VALUES ('kept')`);
    expect(await migrate(shared, schema, [notesAuthor, notes])).toEqual([2]);
    expect(await schemaVersion(shared, schema)).toBe(2);
    const rows = await shared.query(`SELECT text, author FROM "${schema}".notes`);
    expect(rows.rows).toEqual([{ text: "kept", author: "unknown" }]);
  });

  it("a version-4 schema's interrupts get their root graph: the app filter finds them all", async () => {
    const schema = freshSchema();
    const shared = pool();
    await migrate(
      shared,
      schema,
      MIGRATIONS.filter((m) => m.version <= 4),
    );
    // Rows as version 4 wrote them: no root_graph column; the root is only in the encoded path.
    const codec = new RowCodec(jsonSerializer);
    const [email] = OLD_ROWS.slice(2);
    for (const row of OLD_ROWS) {
      const a = codec.interruptArrays([row]).map((column) => column[0]);
      // An older encoding kept the whole path in the body.
      if (row === email) a[12] = JSON.stringify({ ...JSON.parse(String(a[12])), path: row.path });
      await shared.query(
        `INSERT INTO "${schema}".interrupts (id, thread_id, run_id, task_id, graph, tenant, status,
           created_at, deadline, answer, answered_by, answered_at, record)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
        a,
      );
    }
    const saver = await PostgresSaver.connect({ pool: shared, schema });
    expect(await schemaVersion(shared, schema)).toBe(SCHEMA_VERSION);
    const app = await saver.listInterrupts({ graph: "support-desk", count: true });
    expect([app.items.map((i) => i.id).sort(), app.total]).toEqual([
      ["i_email", "i_refund", "i_root"],
      3,
    ]);
    const refund = await saver.listInterrupts({ subAgentGraph: "refund_agent" });
    expect(refund.items.map((i) => i.path)).toEqual([OLD_ROWS[1]?.path]);
  });

  it("a version-6 schema's interrupts read without an approval policy and take an answer without a principal", async () => {
    const schema = freshSchema();
    const shared = pool();
    await migrate(
      shared,
      schema,
      MIGRATIONS.filter((m) => m.version <= 6),
    );
    const codec = new RowCodec(jsonSerializer);
    for (const row of OLD_ROWS) {
      const a = codec.interruptArrays([row]).map((column) => column[0]);
      await shared.query(
        `INSERT INTO "${schema}".interrupts (id, thread_id, run_id, task_id, graph, tenant, status,
           created_at, deadline, answer, answered_by, answered_at, record, root_graph)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
        [...a, codec.interruptRootGraphs([row])[0]],
      );
    }
    const saver = await PostgresSaver.connect({ pool: shared, schema });
    expect(await schemaVersion(shared, schema)).toBe(SCHEMA_VERSION);
    const [root] = OLD_ROWS;
    if (!root) throw new Error("no row");
    const read = await saver.getInterrupt(root.id);
    expect([read?.policy, read?.approvals, read?.status]).toEqual([
      undefined,
      undefined,
      "pending",
    ]);
    const outcome = await saver.answerInterrupts({
      threadId: root.threadId,
      answers: [{ id: root.id, value: "yes" }],
      wake: [],
      actor: "script",
      action: "answer",
    });
    expect(outcome.ok).toBe(true);
    expect((await saver.getInterrupt(root.id))?.status).toBe("answered");
  });

  it("a version-10 schema's threads read with their graph name, gone from their metadata", async () => {
    const schema = freshSchema();
    const shared = pool();
    await migrate(
      shared,
      schema,
      MIGRATIONS.filter((m) => m.version <= 10),
    );
    // Rows as version 10 wrote them: the graph name a hidden key of the encoded metadata.
    const at = "2026-01-01T00:00:00.000Z";
    const insert = (id: string, tenant: string | null, metadata: unknown): Promise<unknown> =>
      shared.query(`INSERT INTO "${schema}".threads VALUES ($1, $2, $3, $3, $4)`, [
        id,
        tenant,
        at,
        jsonSerializer.serialize(metadata),
      ]);
    await insert("t1", "acme", { topic: "refunds", "rein:graph": "support-desk", z: 1 });
    // A metadata object with a `__rein` key of its own is stored escaped.
    await insert("t2", null, { __rein: 1, "rein:graph": "triage" });
    await insert("t3", null, { topic: "core-made" });
    const saver = await PostgresSaver.connect({ pool: shared, schema });
    expect(await schemaVersion(shared, schema)).toBe(SCHEMA_VERSION);
    const [t1, t2, t3] = await Promise.all(
      ["t1", "t2", "t3"].map((id) => saver.getThread(threadId(id))),
    );
    expect([t1?.graph, t1?.metadata]).toEqual(["support-desk", { topic: "refunds", z: 1 }]);
    expect(Object.keys(t1?.metadata ?? {})).toEqual(["topic", "z"]);
    expect([t2?.graph, t2?.metadata]).toEqual(["triage", { __rein: 1 }]);
    expect([t3?.graph, t3?.metadata]).toEqual([undefined, { topic: "core-made" }]);
    const head = await saver.getThreadHead(threadId("t1"), "");
    expect(head.thread?.graph).toBe("support-desk");
    const page = await saver.listThreads({ tenant: "acme" });
    expect(page.items.map((t) => [t.graph, t.metadata])).toEqual([
      ["support-desk", { topic: "refunds", z: 1 }],
    ]);
  });

  it("a version-16 schema's server records in once slots read as side records", async () => {
    const schema = freshSchema();
    const shared = pool();
    await migrate(
      shared,
      schema,
      MIGRATIONS.filter((m) => m.version <= 16),
    );
    const legacy = legacySideRecordCase();
    const s = `"${schema}"`;
    const at = "2026-01-01T00:00:00.000Z";
    for (const t of legacy.threads)
      await shared.query(`INSERT INTO ${s}.threads VALUES ($1, $2, $3, $3, '{}')`, [
        t.threadId,
        t.tenant,
        at,
      ]);
    for (const o of legacy.slots)
      await shared.query(`INSERT INTO ${s}.once_results VALUES ($1, $2, $3, $4)`, [
        o.threadId,
        o.taskId,
        o.key,
        o.text,
      ]);
    for (const r of legacy.earlier)
      await shared.query(`INSERT INTO ${s}.side_records VALUES ($1, $2, $3, $4, $5, NULL, $6)`, [
        r.tenant !== null,
        r.tenant ?? "",
        r.kind,
        r.key,
        r.text,
        r.threadId,
      ]);
    const saver = await PostgresSaver.connect({ pool: shared, schema });
    expect(await schemaVersion(shared, schema)).toBe(SCHEMA_VERSION);
    for (const e of legacy.expected)
      expect((await saver.getSideRecord(e.tenant, e.kind, e.key))?.value, e.why).toEqual(e.value);
    // The copies are their thread's: they leave with it.
    const [claim] = legacy.expected;
    await saver.deleteThread(threadId("t-1"));
    expect(await saver.getSideRecord(claim!.tenant, claim!.kind, claim!.key)).toBeUndefined();
  });

  it("a failing migration rolls back entirely and leaves the previous version", async () => {
    const schema = freshSchema();
    const shared = pool();
    await migrate(shared, schema, [notes]);
    const broken: Migration = {
      version: 2,
      name: "broken",
      sql: (s) => `CREATE TABLE ${s}.half (a int); INSERT INTO ${s}.no_such_table VALUES (1);`,
    };
    await expect(migrate(shared, schema, [notes, broken])).rejects.toThrow(/no_such_table/);
    expect(await schemaVersion(shared, schema)).toBe(1);
    const half = await shared.query("SELECT to_regclass($1) AS t", [`"${schema}".half`]);
    expect(half.rows[0]).toEqual({ t: null });
  });

  it("a schema migrated by a newer Rein is refused with SchemaVersionError", async () => {
    const schema = freshSchema();
    const shared = pool();
    await migrate(shared, schema);
    await shared.query(
      `INSERT INTO "${schema}".schema_migrations (version, name) VALUES ($1, $2)`,
      [SCHEMA_VERSION + 1, "from the future"],
    );
    const error: unknown = await PostgresSaver.connect({ pool: shared, schema }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SchemaVersionError);
    expect((error as SchemaVersionError).details).toEqual({
      found: SCHEMA_VERSION + 1,
      known: SCHEMA_VERSION,
    });
    expect(await schemaVersion(shared, schema)).toBe(SCHEMA_VERSION + 1);
  });

  it("refuses a schema name that would need more than plain quoting", () => {
    expect(() => new PostgresSaver({ pool: pool(), schema: 'rein"; DROP TABLE x; --' })).toThrow(
      /Invalid Postgres schema name/,
    );
  });
});

describe.skipIf(!probe.available)("Postgres schema", () => {
  it("keeps leases in a logged table (a promoted replica has them)", async () => {
    const schema = testSchemaName();
    const shared = new pg.Pool({ connectionString: probe.url });
    try {
      await migrate(shared, schema);
      const row = await shared.query<{ relpersistence: string }>(
        "SELECT c.relpersistence FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = 'leases'",
        [schema],
      );
      expect(row.rows[0]?.relpersistence).toBe("p");
    } finally {
      await shared.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await shared.end();
    }
  });

  it("holds only pending rows in the queue's filtered indexes, so an answer writes 4 index entries", async () => {
    const schema = testSchemaName();
    const shared = new pg.Pool({ connectionString: probe.url });
    try {
      await migrate(shared, schema);
      const { rows } = await shared.query<{
        name: string;
        columns: string[];
        predicate: string | null;
      }>(
        `SELECT c.relname AS name, pg_get_expr(i.indpred, i.indrelid) AS predicate,
           ARRAY(SELECT a.attname FROM unnest(i.indkey) AS k (n)
             JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n) AS columns
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
         JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
         WHERE n.nspname = $1 AND t.relname = 'interrupts'`,
        [schema],
      );
      const byName = new Map(rows.map((r) => [r.name, r]));
      for (const name of [
        "interrupts_queue",
        "interrupts_by_tenant",
        "interrupts_by_graph",
        "interrupts_by_root_graph",
      ]) {
        expect(byName.get(name)?.predicate, name).toBe("(status = 'pending'::text)");
        expect(byName.get(name)?.columns, name).not.toContain("status");
      }
      expect(byName.has("interrupts_by_thread")).toBe(false);
      // What an answer's update (never HOT: its status changes) writes into: the full indexes.
      const full = rows.filter((r) => r.predicate === null).map((r) => r.name);
      expect(full.sort()).toEqual([
        "interrupts_by_created",
        "interrupts_by_run",
        "interrupts_by_task",
        "interrupts_pkey",
      ]);
    } finally {
      await shared.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await shared.end();
    }
  });
});
