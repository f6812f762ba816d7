import { describe, expect, it } from "vitest";
import { SqliteSaver } from "./saver.ts";
import { prepareStatements } from "./statements.ts";

/** The plan SQLite picks for `sql`, one detail line per step. */
function planOf(saver: SqliteSaver, sql: string, params: unknown[]): string {
  return saver.db
    .prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .all(...(params as string[]))
    .map((row) => String(row["detail"]))
    .join(" | ");
}

// Every answer reads the thread's pending count and its oldest page of pending questions. Read
// through an index of pending entries only, they cost the same whether the thread has already
// answered 10 questions or 10,000, and count without a table read per entry.
describe("the reads every answer makes (SQLite)", () => {
  it("counts a thread's pending questions from the pending index alone", () => {
    const saver = new SqliteSaver({ path: ":memory:" });
    try {
      const sql = prepareStatements(saver.db);
      const plan = planOf(saver, sql.pendingCount.sourceSQL, ["t"]);
      expect(plan).toMatch(/USING COVERING INDEX interrupts_pending_by_thread\b/);
    } finally {
      void saver.close();
    }
  });

  it("reads the oldest pending page in index order, sorting nothing", () => {
    const saver = new SqliteSaver({ path: ":memory:" });
    try {
      const sql = prepareStatements(saver.db);
      const plan = planOf(saver, sql.pendingPage.sourceSQL, ["t", "10"]);
      expect(plan).toMatch(/USING INDEX interrupts_pending_by_thread\b/);
      expect(plan).not.toMatch(/TEMP B-TREE/);
    } finally {
      void saver.close();
    }
  });

  it("the pending index holds only what waits: an answered question leaves it", () => {
    const saver = new SqliteSaver({ path: ":memory:" });
    try {
      const insert = saver.db.prepare(
        `INSERT INTO interrupts (id, thread_id, run_id, task_id, graph, status, created_at, record)
         VALUES (?, 't', 'r', ?, 'g', ?, ?, '{}')`,
      );
      for (let i = 0; i < 30; i++)
        insert.run(`i${i}`, `task${i}`, i < 20 ? "answered" : "pending", `2026-01-01T00:00:${i}`);
      const entries = saver.db
        .prepare(
          `SELECT count(*) AS n FROM interrupts INDEXED BY interrupts_pending_by_thread
           WHERE thread_id = 't' AND status = 'pending'`,
        )
        .get();
      expect(entries?.["n"]).toBe(10);
      const sql = prepareStatements(saver.db);
      expect(sql.pendingCount.get("t")?.n).toBe(10);
      expect(sql.pendingPage.all("t", 3).map((row) => row.id)).toEqual(["i20", "i21", "i22"]);
    } finally {
      void saver.close();
    }
  });
});
