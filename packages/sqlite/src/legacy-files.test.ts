/**
 * Files written by earlier versions of the store open as they are: `int/fixtures/` holds
 * databases made by the store when it ran on better-sqlite3 (`int/legacy-fixture.ts`), and the
 * node:sqlite store must read every row of them, migrate the older one and carry on writing.
 * Each test works on a copy, so the committed files never change.
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Command, RunConfig, type InterruptId, type RunId, type TaskId } from "@rein/core";
import { makeSubscription, threadId } from "@rein/core/testing";
import { openDatabase } from "./driver.ts";
import { LEGACY_THREAD, legacyGraph } from "./int/legacy-graph.ts";
import { MIGRATIONS, SCHEMA_VERSION, schemaVersion } from "./migrations.ts";
import { SqliteSaver } from "./saver.ts";
import { SqliteWebhooks } from "./webhooks.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "rein-legacy-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A copy of the fixture `name` in this test's folder. */
function copyOf(name: string): string {
  const path = join(dir, name);
  copyFileSync(fileURLToPath(new URL(`./int/fixtures/${name}`, import.meta.url)), path);
  return path;
}

/** The schema versions recorded in the file. */
function appliedVersions(saver: SqliteSaver): unknown[] {
  return saver.db
    .prepare("SELECT version FROM schema_migrations ORDER BY version")
    .all()
    .map((row) => row["version"]);
}

describe("database files written by the better-sqlite3 store", () => {
  it("a file at the newest schema of that version reads whole and its paused run finishes", async () => {
    const saver = new SqliteSaver({ path: copyOf("schema-4.db") });
    try {
      expect(appliedVersions(saver)).toEqual(MIGRATIONS.map((m) => m.version));
      const thread = threadId(LEGACY_THREAD);
      expect((await saver.getThread(thread))?.threadId).toBe(LEGACY_THREAD);
      const pending = await saver.getPendingInterrupts(thread, 10);
      expect(pending.total).toBe(1);
      expect(pending.items[0]?.payload).toEqual({ question: "Send this email?" });
      const answered = await saver.getThreadInterrupts(thread, "answered");
      expect(answered.map((i) => [i.payload, i.answer])).toEqual([
        [{ question: "Refund 40 EUR?" }, true],
      ]);
      expect((await saver.listSteering(thread)).map((s) => s.text)).toEqual([
        "Check the customer's order history first.",
      ]);
      expect((await saver.listAudit({ threadId: thread })).items.length).toBeGreaterThan(0);
      expect(await saver.getRequestResult("req-start")).toBeDefined();
      // The fixture released lease token 3; the next holder gets 4, never a reused token.
      expect(await saver.acquireLease(thread, "now", 60_000)).toBe(4);
      await saver.releaseLease(thread, "now");

      // The step is half done: the refund's writes wait in a task result beside the paused email.
      const head = await saver.getCheckpoint(thread, "");
      const results = head ? await saver.getTaskResultKinds(thread, "", head.id) : [];
      expect(results.map((r) => r.kind).sort()).toEqual(["paused", "writes"]);
      const graph = legacyGraph(saver);
      const before = await graph.getState(RunConfig.thread(LEGACY_THREAD));
      expect(before.values.log).toEqual(["drafted A-17 (reservation-for-A-17)"]);
      const done = await graph.resume(RunConfig.thread(LEGACY_THREAD), Command.resume("Hello"));
      expect(done.status).toBe("done");
      expect([...done.values.log].sort()).toEqual(
        ["drafted A-17 (reservation-for-A-17)", "emailed: Hello", "refunded"].sort(),
      );
    } finally {
      await saver.close();
    }
  });

  it("a question pending in an old file, answered after the upgrade, is reported to webhooks", async () => {
    const saver = new SqliteSaver({ path: copyOf("schema-4.db") });
    try {
      const webhooks = new SqliteWebhooks(saver);
      await webhooks.createSubscription(makeSubscription("wh_legacy", null));
      const graph = legacyGraph(saver);
      await graph.resume(RunConfig.thread(LEGACY_THREAD), Command.resume("Hello"));
      const now = new Date(Date.now() + 1000).toISOString();
      const claims = await webhooks.claimDeliveries(now, now, 10);
      expect(claims.map((c) => [c.event.type, c.event.threadId]).sort()).toEqual([
        ["interrupt.answered", LEGACY_THREAD],
        ["run.finished", LEGACY_THREAD],
      ]);
    } finally {
      await saver.close();
    }
  });

  it("a file at the first schema is migrated to the newest, keeping every row", async () => {
    const path = copyOf("schema-1.db");
    const raw = openDatabase(path, { readOnly: true });
    expect(schemaVersion(raw)).toBe(1);
    raw.close();

    const saver = new SqliteSaver({ path });
    try {
      expect(schemaVersion(saver.db)).toBe(SCHEMA_VERSION);
      const old = threadId("old-1");
      expect((await saver.listThreads({})).items.map((t) => t.threadId)).toEqual(["old-1"]);
      expect(await saver.getChannelValues(old, "", { log: "v2~1" })).toEqual({ log: ["a", "b"] });
      expect(await saver.getRequestResult("req-old")).toEqual({ result: { ok: true } });
      // Migration 3 moved the run's status and update time to columns its index serves.
      const run = await saver.getRun("run-old" as RunId);
      expect(run?.status).toBe("interrupted");
      const interrupted = await saver.listRunsByStatus({ status: "interrupted" });
      expect(interrupted.items.map((r) => r.runId)).toEqual(["run-old"]);
      // Migration 4 moved the task id to a column: the interrupt is found by its task.
      const byTask = await saver.getTaskInterrupts(old, ["task-old" as TaskId]);
      expect(byTask.map((i) => i.id)).toEqual(["int-old" as InterruptId]);
      // Migration 3 gave leases a token: the first holder after the upgrade gets 1.
      expect(await saver.acquireLease(old, "new-owner", 60_000)).toBe(1);
    } finally {
      await saver.close();
    }
  });
});
