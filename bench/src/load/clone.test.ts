import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Command,
  END,
  lastValue,
  RunConfig,
  START,
  StateGraph,
  type Checkpointer,
  type ThreadId,
} from "@rein/core";
import { PostgresSaver } from "@rein/postgres";
import { SqliteSaver } from "@rein/sqlite";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probePostgres, type PostgresTarget } from "../harness/postgres.ts";
import { openSqlite } from "../harness/sqlite.ts";
import { cloneThreadPostgres, cloneThreadSqlite, copiedId } from "./clone.ts";

// A thread paused once, copied with SQL: every copy must be a paused thread of its own — listed
// in the queue with its own interrupt id and thread id, and resumable to completion without
// touching the template or the other copies.

function askGraph(saver: Checkpointer) {
  return new StateGraph({ answer: lastValue<string>(() => "") })
    .addNode("ask", (_s, ctx) => ({ answer: ctx.interrupt<string>({ question: "Proceed?" }) }))
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: saver, name: "ask" });
}

async function checkCopies(saver: Checkpointer, copies: number): Promise<void> {
  const page = await saver.listInterrupts({ status: "pending", limit: 50 });
  const threads = page.items.map((i) => i.threadId).sort();
  expect(threads).toEqual(
    ["tmpl", ...Array.from({ length: copies }, (_, i) => copiedId("tmpl", i + 1))].sort(),
  );
  expect(new Set(page.items.map((i) => i.id)).size).toBe(copies + 1);
  for (const item of page.items) expect(item.path[0]?.runId).toBe(item.runId);

  const graph = askGraph(saver);
  const copy = copiedId("tmpl", 2);
  const result = await graph.resume(RunConfig.thread(copy), Command.resume("yes"));
  expect(result.status).toBe("done");
  expect(result.status === "done" && result.values.answer).toBe("yes");
  const after = await saver.listInterrupts({ status: "pending", limit: 50 });
  expect(after.items.map((i) => i.threadId)).not.toContain(copy);
  expect(after.items).toHaveLength(copies);
  const answered = await saver.getThreadInterrupts(copy as ThreadId, "answered");
  expect(answered).toHaveLength(1);
  expect(await saver.getThreadInterrupts("tmpl" as ThreadId, "pending")).toHaveLength(1);
}

describe("copying a paused thread with SQL", () => {
  let dir: string;
  let postgres: PostgresTarget;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "rein-clone-test-"));
    postgres = await probePostgres();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("makes resumable paused threads on SQLite", async () => {
    const path = join(dir, "clone.db");
    const saver = new SqliteSaver({ path });
    try {
      const first = await askGraph(saver).invoke({}, { threadId: "tmpl" });
      expect(first.status).toBe("interrupted");
      const db = openSqlite(path);
      db.exec("PRAGMA busy_timeout = 5000");
      const report = cloneThreadSqlite(db, "tmpl", 3);
      db.close();
      expect(report["interrupts"]).toBe(3);
      expect(report["threads"]).toBe(3);
      await checkCopies(saver, 3);
    } finally {
      await saver.close();
    }
  });

  it("makes resumable paused threads on Postgres", async (t) => {
    if (!postgres.ok) return t.skip();
    const schema = `rein_clone_test_${process.pid}`;
    const saver = await PostgresSaver.connect({ connectionString: postgres.url, schema });
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      const first = await askGraph(saver).invoke({}, { threadId: "tmpl" });
      expect(first.status).toBe("interrupted");
      const report = await cloneThreadPostgres(client, schema, "tmpl", 3);
      expect(report["interrupts"]).toBe(3);
      await checkCopies(saver, 3);
    } finally {
      await saver.close();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  });
});
