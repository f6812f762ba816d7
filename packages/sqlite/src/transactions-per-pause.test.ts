/**
 * Pins how many write transactions a pause and a resume take on the SQLite store: each one is a
 * WAL commit, the floor of what a round trip costs on this driver. Counted by wrapping the
 * driver's statements, so any new write (a statement in autocommit, a `BEGIN … COMMIT` that
 * writes) shows up here.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Command, END, lastValue, RunConfig, START, StateGraph } from "@rein/core";
import { sqlite } from "./driver.ts";
import { SqliteSaver } from "./saver.ts";

/** A statement that changes rows (a CTE counts when it ends in a write). */
const WRITE = /^(insert|update|delete|replace)\b|^with\b[\s\S]*\b(insert|update|delete)\b/i;

type Method = (this: { sourceSQL: string }, ...args: unknown[]) => unknown;
type Methods = Record<"run" | "get" | "all" | "iterate", Method>;

/**
 * Counts write transactions on every connection while installed: each `BEGIN … COMMIT` that ran
 * at least one write, plus each write statement run outside a transaction (its own commit).
 */
function countWriteTransactions() {
  const proto = sqlite.StatementSync.prototype as unknown as Methods;
  const names = ["run", "get", "all", "iterate"] as const;
  const originals = names.map((name) => [name, proto[name]] as const);
  const statements = { open: false, wrote: false, transactions: 0, writes: 0 };
  for (const [name, original] of originals) {
    proto[name] = function (...args) {
      const sql = this.sourceSQL.trim();
      if (/^begin\b/i.test(sql)) Object.assign(statements, { open: true, wrote: false });
      else if (/^(commit|end|rollback)\b/i.test(sql)) {
        if (statements.open && statements.wrote && !/^rollback/i.test(sql))
          statements.transactions += 1;
        statements.open = false;
      } else if (WRITE.test(sql)) {
        statements.writes += 1;
        if (statements.open) statements.wrote = true;
        else statements.transactions += 1;
      }
      return original.apply(this, args);
    };
  }
  return {
    /** Write transactions since the last call, and write statements among them. */
    take(): { transactions: number; writes: number } {
      const taken = { transactions: statements.transactions, writes: statements.writes };
      Object.assign(statements, { transactions: 0, writes: 0 });
      return taken;
    },
    restore(): void {
      for (const [name, original] of originals) proto[name] = original;
    },
  };
}

/** The round trip the bench measures (`bench/src/scenarios/pause-resume.ts`). */
function approvalGraph(saver: SqliteSaver) {
  return new StateGraph({ n: lastValue<number>(() => 0), answer: lastValue<string>(() => "") })
    .addNode("prepare", (s) => ({ n: s.n + 1 }))
    .addNode("ask", (s, ctx) => ({
      answer: ctx.interrupt<string>({ question: `approve ${s.n}?` }),
    }))
    .addEdge(START, "prepare")
    .addEdge("prepare", "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: saver });
}

describe("write transactions of a pause and a resume (SQLite)", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("a pause commits at most 4 times and a resume at most 3", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rein-tx-"));
    dirs.push(dir);
    const saver = new SqliteSaver({ path: join(dir, "rein.db") });
    const graph = approvalGraph(saver);
    const counter = countWriteTransactions();
    try {
      // Lease acquired (1), input checkpoint (2), `prepare`'s step (3), the question with the
      // lease released (4).
      const paused = await graph.invoke({ n: 1 }, { threadId: "t" });
      expect(paused.status).toBe("interrupted");
      const pause = counter.take();
      // Lease acquired (1), the answer (2), `ask`'s step with the lease released (3).
      const done = await graph.resume(RunConfig.thread("t"), Command.resume("yes"));
      expect(done.status).toBe("done");
      expect(done.values).toEqual({ n: 2, answer: "yes" });
      const resume = counter.take();
      // The counter sees the writes at all (else the bounds below would pass on nothing).
      expect(pause.writes).toBeGreaterThanOrEqual(pause.transactions);
      expect(pause.transactions).toBeGreaterThan(0);
      expect(pause.transactions).toBeLessThanOrEqual(4);
      expect(resume.transactions).toBeGreaterThan(0);
      expect(resume.transactions).toBeLessThanOrEqual(3);
    } finally {
      counter.restore();
      await saver.close();
    }
  });
});
