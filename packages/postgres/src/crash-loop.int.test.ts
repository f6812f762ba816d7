/**
 * The bounded crash loop on Postgres (issue 8): hundreds of SIGKILLs at random points of runs
 * with parallel tasks, interrupts, answers and `ctx.once` side effects, on a fresh schema of the
 * test server (the clients die, never the server); then no committed step lost, no forked
 * history, side effects at most once per idempotency key. Prints the counts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { bundleWorker, runCrashLoop } from "@rein/core/testing/process";
import { PostgresSaver } from "./saver.ts";
import { probePostgres, redactUrl, testSchemaName } from "./testing.ts";

const probe = await probePostgres();

describe.skipIf(!probe.available)(`crash loop on Postgres at ${redactUrl(probe.url)}`, () => {
  const dir = mkdtempSync(join(tmpdir(), "rein-pg-crash-loop-"));
  const schema = testSchemaName();
  const open = () => PostgresSaver.connect({ connectionString: probe.url, schema });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    const saver = new PostgresSaver({ connectionString: probe.url, schema });
    await saver.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await saver.close();
  });

  it("SIGKILLs at random points lose no committed step, fork no history and repeat no keyed effect", async () => {
    await (await open()).close();
    const worker = await bundleWorker(
      fileURLToPath(new URL("./int/crash-loop-worker.ts", import.meta.url)),
    );
    const counts = await runCrashLoop({
      worker: { ...worker, args: [...worker.args, probe.url, schema] },
      dir,
      open,
      label: "postgres",
    });
    expect(counts.threads).toBeGreaterThan(0);
  }, 120_000);
});
