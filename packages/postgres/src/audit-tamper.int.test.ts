/**
 * Tampering with the audit log in Postgres, with SQL as someone holding the database would: each
 * change is found by verifyAudit, which names the first broken line; a deleted tail is found
 * against the signed head. The `audit_chain` trigger hashes exactly as `auditEntryHash` does.
 */
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { jsonSerializer } from "@rein/core";
import { auditEntryHash, type AuditVerification } from "@rein/core/store";
import { makeAudit, threadId } from "@rein/core/testing";
import { MIGRATIONS, migrate } from "./migrations.ts";
import { PostgresSaver } from "./saver.ts";
import {
  createTestSaver,
  destroyTestSaver,
  probePostgres,
  redactUrl,
  testSchemaName,
} from "./testing.ts";

const probe = await probePostgres();
const KEY = "tamper-test-key";

interface Line {
  seq: number;
  n: number;
  hash: string;
  record: string;
}

function broken(result: AuditVerification): unknown {
  expect(result.ok).toBe(false);
  const { threadId: thread, n, seq, id, reason } = result.firstBroken ?? {};
  return { threadId: thread, n, seq, id, reason };
}

describe.skipIf(!probe.available)(
  `audit chain tampering on postgres at ${redactUrl(probe.url)}`,
  () => {
    let saver: PostgresSaver;
    let a: string;
    const sql = (text: string, values: unknown[] = []) => saver.pool.query(text, values);

    async function line(n: number, thread = "t1"): Promise<Line> {
      const { rows } = await sql(
        `SELECT seq::int AS seq, n::int AS n, hash, record FROM ${a} WHERE thread_id = $1 AND n = $2`,
        [thread, n],
      );
      const row = rows[0] as Line | undefined;
      if (!row) throw new Error(`no line ${thread}#${n}`);
      return row;
    }

    /** t1's lines a1..a5 (positions 1..5) and t2's b1, b2. */
    async function seed(): Promise<void> {
      for (const id of ["a1", "a2", "a3", "a4", "a5"]) await saver.appendAudit(makeAudit("t1", id));
      for (const id of ["b1", "b2"]) await saver.appendAudit(makeAudit("t2", id));
    }

    beforeEach(async () => {
      saver = await createTestSaver(probe.url);
      a = `"${saver.schema}".audit`;
    });
    afterEach(async () => {
      await destroyTestSaver(saver);
    });

    it("the trigger hashes as auditEntryHash does, for any thread id (line breaks, non-ASCII)", async () => {
      const odd = "t\n1:ü🙂";
      await saver.appendAudit(makeAudit(odd, "x1", { actor: "zoë\u2028" }));
      await saver.appendAudit(makeAudit(odd, "x2"));
      const { items } = await saver.listAuditChain({ threadId: threadId(odd) });
      expect(items).toHaveLength(2);
      for (const entry of items) {
        expect(entry.hash).toBe(
          auditEntryHash(odd, entry.n ?? 0, entry.prevHash ?? "", entry.content),
        );
      }
      expect(await saver.verifyAudit({})).toMatchObject({ ok: true, checked: 2 });
    });

    it("an intact log verifies; a manual UPDATE of one line's data names that line", async () => {
      await seed();
      expect(await saver.verifyAudit({})).toEqual({
        ok: true,
        checked: 7,
        chains: 2,
        legacy: 0,
        signed: null,
      });
      const target = await line(3);
      await sql(`UPDATE ${a} SET record = replace(record, 'alice', 'mallory') WHERE seq = $1`, [
        target.seq,
      ]);
      expect(broken(await saver.verifyAudit({}))).toEqual({
        threadId: "t1",
        n: 3,
        seq: target.seq,
        id: "a3",
        reason: "hash_mismatch",
      });
    });

    it("deleting a middle line is a missing entry, named at its position", async () => {
      await seed();
      const next = await line(4);
      await sql(`DELETE FROM ${a} WHERE seq = $1`, [(await line(3)).seq]);
      expect(broken(await saver.verifyAudit({}))).toEqual({
        threadId: "t1",
        n: 3,
        seq: next.seq,
        id: "a4",
        reason: "missing",
      });
    });

    it("a forged line inserted past the trigger, linked by the published rule, is out of order", async () => {
      await seed();
      const record = jsonSerializer.serialize(makeAudit("t1", "forged", { actor: "mallory" }));
      const prev = (await line(1)).hash;
      await sql(`ALTER TABLE ${a} DISABLE TRIGGER audit_chain`);
      const { rows } = await sql(
        `INSERT INTO ${a} (thread_id, record, n, prev_hash, hash) VALUES ('t1', $1, 2, $2, $3)
       RETURNING seq::int AS seq`,
        [record, prev, auditEntryHash("t1", 2, prev, record)],
      );
      expect(broken(await saver.verifyAudit({}))).toEqual({
        threadId: "t1",
        n: 2,
        seq: (rows[0] as { seq: number }).seq,
        id: "forged",
        reason: "out_of_order",
      });
    });

    it("a line inserted with chain fields of its own is re-linked at the end by the trigger", async () => {
      await seed();
      const record = jsonSerializer.serialize(makeAudit("t1", "late"));
      await sql(
        `INSERT INTO ${a} (thread_id, record, n, prev_hash, hash) VALUES ('t1', $1, 2, '', 'x')`,
        [record],
      );
      const last = await line(6);
      expect(last.record).toBe(record);
      expect(last.hash).toBe(auditEntryHash("t1", 6, (await line(5)).hash, record));
      expect(await saver.verifyAudit({})).toMatchObject({ ok: true, checked: 8 });
    });

    it("swapping two lines' positions or records (reordering) is found at the first", async () => {
      await seed();
      const [second, fourth] = [await line(2), await line(4)];
      await sql(`UPDATE ${a} SET n = CASE WHEN seq = $1 THEN 4 ELSE 2 END WHERE seq IN ($1, $2)`, [
        second.seq,
        fourth.seq,
      ]);
      expect(broken(await saver.verifyAudit({}))).toEqual({
        threadId: "t1",
        n: 4,
        seq: second.seq,
        id: "a2",
        reason: "out_of_order",
      });
      await sql(`UPDATE ${a} SET n = CASE WHEN seq = $1 THEN 2 ELSE 4 END WHERE seq IN ($1, $2)`, [
        second.seq,
        fourth.seq,
      ]);
      expect(await saver.verifyAudit({})).toMatchObject({ ok: true });
      await sql(
        `UPDATE ${a} x SET record = y.record FROM ${a} y
       WHERE (x.seq, y.seq) IN (($1, $2), ($2, $1))`,
        [second.seq, fourth.seq],
      );
      expect(broken(await saver.verifyAudit({}))).toMatchObject({
        n: 2,
        id: "a4",
        reason: "hash_mismatch",
      });
    });

    it("deleting the newest lines is found against the signed head, not without it", async () => {
      await seed();
      expect(await saver.verifyAudit({ key: KEY })).toMatchObject({
        signed: { checked: 0, written: 2 },
      });
      await sql(`DELETE FROM ${a} WHERE thread_id = 't1' AND n >= 4`);
      expect(await saver.verifyAudit({})).toMatchObject({ ok: true, checked: 5 });
      expect(broken(await saver.verifyAudit({ key: KEY }))).toEqual({
        threadId: "t1",
        n: 5,
        seq: null,
        id: null,
        reason: "truncated",
      });
    });

    it("concurrent writers of one thread on separate connections each take one position", async () => {
      const other = new PostgresSaver({ connectionString: probe.url, schema: saver.schema });
      try {
        await Promise.all(
          Array.from({ length: 16 }, (_, i) =>
            (i % 2 ? other : saver).appendAudit(makeAudit("t1", `c${i}`)),
          ),
        );
      } finally {
        await other.close();
      }
      const { rows } = await sql(`SELECT n::int AS n FROM ${a} ORDER BY seq`);
      expect(rows.map((row: { n: number }) => row.n)).toEqual(
        Array.from({ length: 16 }, (_, i) => i + 1),
      );
      expect(await saver.verifyAudit({})).toMatchObject({ ok: true, checked: 16 });
    });
  },
);

describe.skipIf(!probe.available)("audit lines written before migration 8", () => {
  it("verify as legacy before the thread's first chained line", async () => {
    const schema = testSchemaName();
    const pool = new pg.Pool({ connectionString: probe.url });
    try {
      await migrate(
        pool,
        schema,
        MIGRATIONS.filter((m) => m.version <= 6),
      );
      const old = jsonSerializer.serialize(makeAudit("t1", "old"));
      await pool.query(`INSERT INTO "${schema}".audit (thread_id, record) VALUES ('t1', $1)`, [
        old,
      ]);
      const saver = await PostgresSaver.connect({ pool, schema });
      await saver.appendAudit(makeAudit("t1", "new1"));
      expect(await saver.verifyAudit({})).toEqual({
        ok: true,
        checked: 1,
        chains: 1,
        legacy: 1,
        signed: null,
      });
    } finally {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    }
  });
});
