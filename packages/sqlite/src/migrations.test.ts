import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SchemaVersionError, jsonSerializer } from "@rein/core";
import type { StoredInterrupt } from "@rein/core/store";
import {
  checkpointId,
  legacySideRecordCase,
  makeCheckpoint,
  makeCommit,
  threadId,
  treeInterrupts,
} from "@rein/core/testing";
import { RowCodec } from "./codec.ts";
import {
  MIGRATIONS,
  SCHEMA_VERSION,
  migrate,
  schemaVersion,
  type Migration,
} from "./migrations.ts";
import { SqliteSaver } from "./saver.ts";
import { openDatabase, pragma } from "./driver.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "rein-migrations-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const notes: Migration = {
  version: 1,
  name: "notes",
  sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)",
};
const notesAuthor: Migration = {
  version: 2,
  name: "notes author",
  sql: "ALTER TABLE notes ADD COLUMN author TEXT NOT NULL DEFAULT 'unknown'",
};

/** A root question and two sub-agent questions of one support-desk tree. */
const OLD_ROWS: StoredInterrupt[] = treeInterrupts();

describe("SQLite migrations", () => {
  it("a fresh file is brought to the newest version on open", async () => {
    const path = join(dir, "rein.db");
    const saver = new SqliteSaver({ path });
    expect(schemaVersion(saver.db)).toBe(SCHEMA_VERSION);
    const applied = saver.db
      .prepare("SELECT version FROM schema_migrations ORDER BY version")
      .all()
      .map((r) => r["version"]);
    expect(applied).toEqual(MIGRATIONS.map((m) => m.version));
    expect(pragma(saver.db, "journal_mode")).toBe("wal");
    await saver.close();
  });

  it("reopening a file applies nothing and keeps its data", async () => {
    const path = join(dir, "rein.db");
    const first = new SqliteSaver({ path });
    await first.commitStep(makeCommit(makeCheckpoint("t1", checkpointId(1)), null));
    await first.close();
    const db = openDatabase(path);
    expect(migrate(db)).toEqual([]);
    db.close();
    const second = SqliteSaver.open(path);
    expect((await second.getCheckpoint(threadId("t1"), ""))?.id).toBe(checkpointId(1));
    await second.close();
  });

  it("versions need not be contiguous: a gap is skipped and the rest applied in order", () => {
    const db = openDatabase(join(dir, "gap.db"));
    const later: Migration = { ...notesAuthor, version: 7 };
    expect(migrate(db, [later, notes])).toEqual([1, 7]);
    expect(schemaVersion(db)).toBe(7);
    db.prepare("INSERT INTO notes (text, author) VALUES ('x', 'y')").run();
    db.close();
  });

  it("a file at an older version is upgraded in order, keeping its rows", () => {
    const path = join(dir, "old.db");
    const db = openDatabase(path);
    expect(migrate(db, [notes])).toEqual([1]);
    db.prepare("INSERT INTO notes (text) VALUES (?)").run("kept");
    db.close();

    const reopened = openDatabase(path);
    expect(migrate(reopened, [notesAuthor, notes])).toEqual([2]);
    expect(schemaVersion(reopened)).toBe(2);
    expect(reopened.prepare("SELECT text, author FROM notes").all()).toEqual([
      { text: "kept", author: "unknown" },
    ]);
    reopened.close();
  });

  it("a version-1 file is upgraded to rowid blobs, keeping every stored value", async () => {
    const path = join(dir, "v1.db");
    const db = openDatabase(path);
    migrate(
      db,
      MIGRATIONS.filter((m) => m.version === 1),
    );
    db.close();
    // No saver stops at version 1, so the rows of a v1 file go in with plain SQL.
    const raw = openDatabase(path);
    raw
      .prepare("INSERT INTO blobs VALUES (?, ?, ?, ?, ?, ?, ?)")
      .run("t1", "", "log", "v1", "full", null, JSON.stringify(["a"]));
    raw
      .prepare("INSERT INTO blobs VALUES (?, ?, ?, ?, ?, ?, ?)")
      .run("t1", "", "log", "v2~1", "delta", "v1", JSON.stringify(["b"]));
    raw.close();
    const saver = new SqliteSaver({ path });
    try {
      expect(schemaVersion(saver.db)).toBe(SCHEMA_VERSION);
      const table = saver.db
        .prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'blobs'")
        .get() as { sql: string };
      expect(table.sql).not.toMatch(/WITHOUT ROWID/i);
      expect(await saver.getChannelValues(threadId("t1"), "", { log: "v2~1" })).toEqual({
        log: ["a", "b"],
      });
    } finally {
      await saver.close();
    }
  });

  it("a version-4 file's interrupts get their root graph: the app filter finds them all", async () => {
    const path = join(dir, "v4.db");
    const db = openDatabase(path);
    migrate(
      db,
      MIGRATIONS.filter((m) => m.version <= 4),
    );
    // Rows as version 4 wrote them: no root_graph column; the root is only in the encoded path.
    const codec = new RowCodec(jsonSerializer);
    const insert = db.prepare(
      `INSERT INTO interrupts (id, thread_id, run_id, task_id, graph, tenant, status, created_at,
         deadline, answer, answered_by, answered_at, record)
       VALUES (@id, @thread_id, @run_id, @task_id, @graph, @tenant, @status, @created_at,
         @deadline, @answer, @answered_by, @answered_at, @record)`,
    );
    for (const row of OLD_ROWS) {
      const { root_graph: _root, policy: _policy, ...params } = codec.interruptParams(row);
      insert.run(params);
    }
    // An older encoding kept the whole path in the body.
    const whole = OLD_ROWS[2] as StoredInterrupt;
    db.prepare("UPDATE interrupts SET record = ? WHERE id = ?").run(
      JSON.stringify({ ...JSON.parse(codec.interruptParams(whole).record), path: whole.path }),
      whole.id,
    );
    db.close();
    const saver = new SqliteSaver({ path });
    try {
      expect(schemaVersion(saver.db)).toBe(SCHEMA_VERSION);
      const app = await saver.listInterrupts({ graph: "support-desk", count: true });
      expect([app.items.map((i) => i.id).sort(), app.total]).toEqual([
        ["i_email", "i_refund", "i_root"],
        3,
      ]);
      const refund = await saver.listInterrupts({ subAgentGraph: "refund_agent" });
      expect(refund.items.map((i) => i.path)).toEqual([OLD_ROWS[1]?.path]);
    } finally {
      await saver.close();
    }
  });

  it("a version-5 file's interrupts read without an approval policy and take an answer without a principal", async () => {
    const path = join(dir, "v5.db");
    const db = openDatabase(path);
    migrate(
      db,
      MIGRATIONS.filter((m) => m.version <= 5),
    );
    const codec = new RowCodec(jsonSerializer);
    const insert = db.prepare(
      `INSERT INTO interrupts (id, thread_id, run_id, task_id, graph, root_graph, tenant, status,
         created_at, deadline, answer, answered_by, answered_at, record)
       VALUES (@id, @thread_id, @run_id, @task_id, @graph, @root_graph, @tenant, @status,
         @created_at, @deadline, @answer, @answered_by, @answered_at, @record)`,
    );
    for (const row of OLD_ROWS) {
      const { policy: _policy, ...params } = codec.interruptParams(row);
      insert.run(params);
    }
    db.close();
    const saver = new SqliteSaver({ path });
    try {
      expect(schemaVersion(saver.db)).toBe(SCHEMA_VERSION);
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
    } finally {
      await saver.close();
    }
  });

  it("a version-14 file's server records in once slots read as side records", async () => {
    const path = join(dir, "v14.db");
    const db = openDatabase(path);
    migrate(
      db,
      MIGRATIONS.filter((m) => m.version <= 14),
    );
    const legacy = legacySideRecordCase();
    const at = "2026-01-01T00:00:00.000Z";
    for (const t of legacy.threads)
      db.prepare("INSERT INTO threads VALUES (?, ?, ?, ?, ?, NULL)").run(
        t.threadId,
        t.tenant,
        at,
        at,
        "{}",
      );
    for (const o of legacy.slots)
      db.prepare("INSERT INTO once_results VALUES (?, ?, ?, ?)").run(
        o.threadId,
        o.taskId,
        o.key,
        o.text,
      );
    for (const r of legacy.earlier)
      db.prepare("INSERT INTO side_records VALUES (?, ?, ?, ?, ?, NULL, ?)").run(
        r.tenant === null ? 0 : 1,
        r.tenant ?? "",
        r.kind,
        r.key,
        r.text,
        r.threadId,
      );
    db.close();
    const saver = new SqliteSaver({ path });
    try {
      expect(schemaVersion(saver.db)).toBe(SCHEMA_VERSION);
      for (const e of legacy.expected)
        expect((await saver.getSideRecord(e.tenant, e.kind, e.key))?.value, e.why).toEqual(e.value);
      // The copies are their thread's: they leave with it.
      const [claim] = legacy.expected;
      await saver.deleteThread(threadId("t-1"));
      expect(await saver.getSideRecord(claim!.tenant, claim!.kind, claim!.key)).toBeUndefined();
    } finally {
      await saver.close();
    }
  });

  it("a version-9 file's threads read with their graph name, gone from their metadata", async () => {
    const path = join(dir, "v9.db");
    const db = openDatabase(path);
    migrate(
      db,
      MIGRATIONS.filter((m) => m.version <= 9),
    );
    // Rows as version 9 wrote them: the graph name a hidden key of the encoded metadata.
    const insert = db.prepare("INSERT INTO threads VALUES (?, ?, ?, ?, ?)");
    const at = "2026-01-01T00:00:00.000Z";
    const metadata = (value: unknown): string => jsonSerializer.serialize(value);
    insert.run("t1", "acme", at, at, metadata({ topic: "refunds", "rein:graph": "support-desk" }));
    // A metadata object with a `__rein` key of its own is stored escaped.
    insert.run("t2", null, at, at, metadata({ __rein: 1, "rein:graph": "triage" }));
    insert.run("t3", null, at, at, metadata({ topic: "core-made" }));
    db.close();
    const saver = new SqliteSaver({ path });
    try {
      expect(schemaVersion(saver.db)).toBe(SCHEMA_VERSION);
      const [t1, t2, t3] = await Promise.all(
        ["t1", "t2", "t3"].map((id) => saver.getThread(threadId(id))),
      );
      expect([t1?.graph, t1?.metadata]).toEqual(["support-desk", { topic: "refunds" }]);
      expect([t2?.graph, t2?.metadata]).toEqual(["triage", { __rein: 1 }]);
      expect([t3?.graph, t3?.metadata]).toEqual([undefined, { topic: "core-made" }]);
      expect((await saver.getThreadHead(threadId("t1"), "")).thread?.graph).toBe("support-desk");
      const page = await saver.listThreads({ tenant: "acme" });
      expect(page.items.map((t) => [t.graph, t.metadata])).toEqual([
        ["support-desk", { topic: "refunds" }],
      ]);
    } finally {
      await saver.close();
    }
  });

  it("a failing migration rolls back entirely and leaves the previous version", () => {
    const db = openDatabase(join(dir, "fail.db"));
    migrate(db, [notes]);
    const broken: Migration = {
      version: 2,
      name: "broken",
      sql: "CREATE TABLE half (a); INSERT INTO no_such_table VALUES (1);",
    };
    expect(() => migrate(db, [notes, broken])).toThrow(/no_such_table/);
    expect(schemaVersion(db)).toBe(1);
    const half = db.prepare("SELECT name FROM sqlite_master WHERE name = 'half'").get();
    expect(half).toBeUndefined();
    db.close();
  });

  it("a file from a newer Rein is refused with SchemaVersionError and left untouched", () => {
    const path = join(dir, "newer.db");
    const saver = new SqliteSaver({ path });
    saver.db
      .prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)")
      .run(SCHEMA_VERSION + 1, "from the future", new Date().toISOString());
    saver.db.close();

    let error: unknown;
    try {
      new SqliteSaver({ path });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SchemaVersionError);
    expect((error as SchemaVersionError).details).toEqual({
      found: SCHEMA_VERSION + 1,
      known: SCHEMA_VERSION,
    });
    const db = openDatabase(path);
    expect(schemaVersion(db)).toBe(SCHEMA_VERSION + 1);
    db.close();
  });
});
