/**
 * Tampering with the audit log in the SQLite file, with SQL as someone holding the file would:
 * each change is found by verifyAudit, which names the first broken line; a deleted tail is found
 * against the signed head. Lines written before the chain began verify as legacy.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { jsonSerializer } from "@rein/core";
import { auditEntryHash, type AuditVerification } from "@rein/core/store";
import { makeAudit } from "@rein/core/testing";
import { MIGRATIONS, migrate } from "./migrations.ts";
import { openDatabase } from "./driver.ts";
import { SqliteSaver } from "./saver.ts";

const KEY = "tamper-test-key";
let saver: SqliteSaver;

interface Line {
  seq: number;
  n: number;
  hash: string;
  record: string;
}

/** t1's lines a1..a5 (positions 1..5) and t2's b1, b2. */
async function seed(): Promise<void> {
  for (const id of ["a1", "a2", "a3", "a4", "a5"]) await saver.appendAudit(makeAudit("t1", id));
  for (const id of ["b1", "b2"]) await saver.appendAudit(makeAudit("t2", id));
}

function line(n: number, thread = "t1"): Line {
  const row = saver.db
    .prepare("SELECT seq, n, hash, record FROM audit WHERE thread_id = ? AND n = ?")
    .get(thread, n) as Line | undefined;
  if (!row) throw new Error(`no line ${thread}#${n}`);
  return row;
}

function broken(result: AuditVerification): unknown {
  expect(result.ok).toBe(false);
  const { threadId: thread, n, seq, id, reason } = result.firstBroken ?? {};
  return { threadId: thread, n, seq, id, reason };
}

beforeEach(() => {
  saver = new SqliteSaver({ path: ":memory:" });
});
afterEach(async () => {
  await saver.close();
});

describe("audit chain tampering on sqlite", () => {
  it("an intact log verifies: every line of both chains checked", async () => {
    await seed();
    expect(await saver.verifyAudit({})).toEqual({
      ok: true,
      checked: 7,
      chains: 2,
      legacy: 0,
      signed: null,
    });
  });

  it("editing a line's data is a hash mismatch at that line", async () => {
    await seed();
    const target = line(3);
    saver.db
      .prepare("UPDATE audit SET record = replace(record, 'alice', 'mallory') WHERE seq = ?")
      .run(target.seq);
    expect(broken(await saver.verifyAudit({}))).toEqual({
      threadId: "t1",
      n: 3,
      seq: target.seq,
      id: "a3",
      reason: "hash_mismatch",
    });
    // The message names the thread, the entry and the record for a person.
    expect((await saver.verifyAudit({})).firstBroken?.message).toContain(
      'entry 3 (audit record "a3")',
    );
  });

  it("an edit whose hash was re-computed breaks the next line's link", async () => {
    await seed();
    const target = line(3);
    const record = target.record.replace("alice", "mallory");
    const hash = auditEntryHash("t1", 3, line(2).hash, record);
    saver.db
      .prepare("UPDATE audit SET record = ?, hash = ? WHERE seq = ?")
      .run(record, hash, target.seq);
    expect(broken(await saver.verifyAudit({}))).toMatchObject({
      n: 4,
      seq: line(4).seq,
      reason: "broken_link",
    });
  });

  it("deleting a middle line is a missing entry, named at its position", async () => {
    await seed();
    const next = line(4);
    saver.db.prepare("DELETE FROM audit WHERE seq = ?").run(line(3).seq);
    expect(broken(await saver.verifyAudit({}))).toEqual({
      threadId: "t1",
      n: 3,
      seq: next.seq,
      id: "a4",
      reason: "missing",
    });
  });

  it("a forged line, linked and hashed by the published rule, is out of order", async () => {
    await seed();
    const record = saver.serializer.serialize(makeAudit("t1", "forged", { actor: "mallory" }));
    const prev = line(1).hash;
    const inserted = saver.db
      .prepare("INSERT INTO audit (thread_id, record, n, prev_hash, hash) VALUES (?, ?, 2, ?, ?)")
      .run("t1", record, prev, auditEntryHash("t1", 2, prev, record));
    expect(broken(await saver.verifyAudit({}))).toEqual({
      threadId: "t1",
      n: 2,
      seq: Number(inserted.lastInsertRowid),
      id: "forged",
      reason: "out_of_order",
    });
  });

  it("a forged line without chain fields after chained lines is unchained", async () => {
    await seed();
    const record = saver.serializer.serialize(makeAudit("t1", "forged"));
    const inserted = saver.db
      .prepare("INSERT INTO audit (thread_id, record) VALUES ('t1', ?)")
      .run(record);
    expect(broken(await saver.verifyAudit({}))).toMatchObject({
      seq: Number(inserted.lastInsertRowid),
      id: "forged",
      reason: "unchained",
    });
  });

  it("swapping two lines' sequence numbers (reordering the log) is out of order", async () => {
    await seed();
    const [second, fourth] = [line(2), line(4)];
    saver.db.exec(`UPDATE audit SET seq = -1 WHERE seq = ${second.seq};
      UPDATE audit SET seq = ${second.seq} WHERE seq = ${fourth.seq};
      UPDATE audit SET seq = ${fourth.seq} WHERE seq = -1;`);
    expect(broken(await saver.verifyAudit({}))).toEqual({
      threadId: "t1",
      n: 4,
      seq: second.seq,
      id: "a4",
      reason: "out_of_order",
    });
  });

  it("swapping two lines' records (their ids and data) is a hash mismatch", async () => {
    await seed();
    const [second, fourth] = [line(2), line(4)];
    const swap = saver.db.prepare("UPDATE audit SET record = ? WHERE seq = ?");
    swap.run(fourth.record, second.seq);
    swap.run(second.record, fourth.seq);
    expect(broken(await saver.verifyAudit({}))).toMatchObject({
      n: 2,
      id: "a4",
      reason: "hash_mismatch",
    });
  });

  it("deleting the newest lines is found against the signed head, not without it", async () => {
    await seed();
    expect(await saver.verifyAudit({ key: KEY })).toMatchObject({
      ok: true,
      signed: { checked: 0, written: 2 },
    });
    saver.db.prepare("DELETE FROM audit WHERE thread_id = 't1' AND n >= 4").run();
    // The shorter chain is internally intact: only the signed head tells.
    expect(await saver.verifyAudit({})).toMatchObject({ ok: true, checked: 5 });
    expect(broken(await saver.verifyAudit({ key: KEY }))).toEqual({
      threadId: "t1",
      n: 5,
      seq: null,
      id: null,
      reason: "truncated",
    });
  });

  it("a rewritten tail with re-computed hashes differs from the signed head", async () => {
    await seed();
    await saver.verifyAudit({ key: KEY });
    const last = line(5);
    const record = last.record.replace("alice", "mallory");
    const hash = auditEntryHash("t1", 5, line(4).hash, record);
    saver.db
      .prepare("UPDATE audit SET record = ?, hash = ? WHERE seq = ?")
      .run(record, hash, last.seq);
    expect(await saver.verifyAudit({})).toMatchObject({ ok: true });
    expect(broken(await saver.verifyAudit({ key: KEY }))).toMatchObject({
      n: 5,
      seq: last.seq,
      reason: "seal_mismatch",
    });
  });

  it("deleting a whole chain under its signed head is truncation; a forged head does not verify", async () => {
    await seed();
    await saver.verifyAudit({ key: KEY });
    saver.db.prepare("UPDATE audit_seals SET n = 9 WHERE thread_id = 't1'").run();
    expect(broken(await saver.verifyAudit({ key: KEY }))).toMatchObject({
      threadId: "t1",
      reason: "bad_signature",
    });
    saver.db.prepare("DELETE FROM audit_seals WHERE thread_id = 't1'").run();
    await saver.verifyAudit({ key: KEY });
    saver.db.prepare("DELETE FROM audit WHERE thread_id = 't2'").run();
    expect(broken(await saver.verifyAudit({ key: KEY }))).toMatchObject({
      threadId: "t2",
      n: 2,
      reason: "truncated",
    });
  });
});

describe("audit lines written before the chain began", () => {
  it("verify as legacy before the first chained line; erasing a chained line's fields is found", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rein-audit-legacy-"));
    try {
      const path = join(dir, "old.db");
      const db = openDatabase(path);
      migrate(
        db,
        MIGRATIONS.filter((m) => m.version <= 5),
      );
      const old = jsonSerializer.serialize(makeAudit("t1", "old"));
      db.prepare("INSERT INTO audit (thread_id, record) VALUES ('t1', ?)").run(old);
      db.close();
      await saver.close();
      saver = new SqliteSaver({ path });
      await saver.appendAudit(makeAudit("t1", "new1"));
      await saver.appendAudit(makeAudit("t1", "new2"));
      expect(await saver.verifyAudit({})).toEqual({
        ok: true,
        checked: 2,
        chains: 1,
        legacy: 1,
        signed: null,
      });
      // Erasing the first chained line's fields cannot make it pass for legacy: it was written
      // after the chain began.
      saver.db
        .prepare("UPDATE audit SET n = NULL, hash = NULL, prev_hash = NULL WHERE n = 1")
        .run();
      expect(broken(await saver.verifyAudit({}))).toMatchObject({
        n: null,
        id: "new1",
        reason: "unchained",
      });
    } finally {
      await saver.close();
      saver = new SqliteSaver({ path: ":memory:" });
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
