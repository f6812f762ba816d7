/**
 * The bounded crash loop on SQLite (issue 8): hundreds of SIGKILLs at random points of runs with
 * parallel tasks, interrupts, answers and `ctx.once` side effects; then no committed step lost,
 * no forked history, side effects at most once per idempotency key. Prints the counts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { bundleWorker, runCrashLoop } from "@rein/core/testing/process";
import { SqliteSaver } from "./saver.ts";

const dir = mkdtempSync(join(tmpdir(), "rein-crash-loop-"));
const db = join(dir, "rein.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("crash loop on SQLite", () => {
  it("SIGKILLs at random points lose no committed step, fork no history and repeat no keyed effect", async () => {
    await new SqliteSaver({ path: db }).close();
    const worker = await bundleWorker(
      fileURLToPath(new URL("./int/crash-loop-worker.ts", import.meta.url)),
    );
    const counts = await runCrashLoop({
      worker: { ...worker, args: [...worker.args, db] },
      dir,
      open: () => Promise.resolve(new SqliteSaver({ path: db })),
      label: "sqlite",
    });
    expect(counts.threads).toBeGreaterThan(0);
  }, 120_000);
});
