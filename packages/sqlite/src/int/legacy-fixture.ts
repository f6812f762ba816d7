/**
 * Writes the database fixtures of `legacy-files.test.ts`: files made by an earlier version of
 * the store, which every later version must open as they are. Run from packages/sqlite:
 * `node --import tsx --conditions=@rein/source src/int/legacy-fixture.ts src/int/fixtures`. The committed files were made
 * at commit 2ce84a4, the last whose store ran on better-sqlite3 (12.11.1, SQLite 3.53.2), before
 * the move to node:sqlite; rerun there (`git checkout 2ce84a4`) to make them again.
 *
 * - `schema-4.db`: the newest schema of that version, holding a paused thread (two parallel
 *   approvals, one answered with a steering note, one pending), its runs, checkpoints, channel
 *   values, task results, once-results, audit lines, a request id and a released lease.
 * - `schema-1.db`: the first schema, with rows as that version wrote them, for the migrations.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Command, RunConfig, type ThreadId } from "@rein/core";
import { openDatabase } from "../driver.ts";
import { MIGRATIONS, migrate } from "../migrations.ts";
import { SqliteSaver } from "../saver.ts";
import { LEGACY_THREAD, legacyGraph } from "./legacy-graph.ts";

const out = process.argv[2];
if (!out) throw new Error("usage: legacy-fixture.ts <folder>");

const current = join(out, "schema-4.db");
rmSync(current, { force: true });
const saver = new SqliteSaver({ path: current });
const graph = legacyGraph(saver);
const thread = RunConfig.thread(LEGACY_THREAD);
const paused = await graph.invoke({ order: "A-17" }, { ...thread, requestId: "req-start" });
const refund = paused.interrupts.find((i) => JSON.stringify(i.payload).includes("Refund"));
if (!refund || paused.interrupts.length !== 2) throw new Error("expected two interrupts");
await graph.steer(
  { runId: paused.runId, namespace: [] },
  "Check the customer's order history first.",
);
// Answers the refund only: the email stays pending, so the file holds both states.
const partial = await graph.resume(thread, Command.resumeMap({ [refund.id]: true }));
if (partial.status !== "interrupted") throw new Error(`expected a pause, got ${partial.status}`);
const token = await saver.acquireLease(LEGACY_THREAD as ThreadId, "fixture", 60_000);
await saver.releaseLease(LEGACY_THREAD as ThreadId, "fixture");
await saver.close();
console.log(`${current}: run ${partial.runId}, lease token ${token}`);

const first = join(out, "schema-1.db");
rmSync(first, { force: true });
const db = openDatabase(first);
migrate(
  db,
  MIGRATIONS.filter((m) => m.version === 1),
);
const insert = (sql: string, ...values: (string | number | null)[]) =>
  db.prepare(sql).run(...values);
insert(
  "INSERT INTO threads VALUES (?, ?, ?, ?, ?)",
  "old-1",
  null,
  "2026-01-01T00:00:00.000Z",
  "2026-01-01T00:00:01.000Z",
  "{}",
);
insert(
  "INSERT INTO blobs VALUES (?, ?, ?, ?, ?, ?, ?)",
  "old-1",
  "",
  "log",
  "v1",
  "full",
  null,
  JSON.stringify(["a"]),
);
insert(
  "INSERT INTO blobs VALUES (?, ?, ?, ?, ?, ?, ?)",
  "old-1",
  "",
  "log",
  "v2~1",
  "delta",
  "v1",
  JSON.stringify(["b"]),
);
insert("INSERT INTO requests VALUES (?, ?, ?)", "req-old", "old-1", JSON.stringify({ ok: true }));
insert(
  "INSERT INTO runs (run_id, thread_id, created_at, record) VALUES (?, ?, ?, ?)",
  "run-old",
  "old-1",
  "2026-01-01T00:00:00.000Z",
  JSON.stringify({
    runId: "run-old",
    threadId: "old-1",
    parentRunId: null,
    status: "interrupted",
    updatedAt: "2026-01-01T00:00:01.000Z",
  }),
);
insert(
  `INSERT INTO interrupts (id, thread_id, run_id, graph, tenant, status, created_at, record)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  "int-old",
  "old-1",
  "run-old",
  "g",
  null,
  "pending",
  "2026-01-01T00:00:00.500Z",
  JSON.stringify({
    id: "int-old",
    threadId: "old-1",
    runId: "run-old",
    taskId: "task-old",
    payload: { q: 1 },
  }),
);
insert("INSERT INTO leases VALUES (?, ?, ?)", "old-1", "someone", 0);
db.close();
console.log(`${first}: schema 1`);
