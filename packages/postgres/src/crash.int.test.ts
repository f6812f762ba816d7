/**
 * Crash safety of the runtime on Postgres, with real processes: SIGKILL in the middle of a
 * superstep loses no finished task and re-runs none, and two processes answering one interrupt at
 * the same moment leave exactly one answer.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runAnswerRace, runCrashScenario } from "@rein/core/testing/runtime";
import { threadId } from "@rein/core/testing";
import { PostgresSaver } from "./saver.ts";
import { probePostgres, redactUrl, testSchemaName } from "./testing.ts";

const probe = await probePostgres();

describe.skipIf(!probe.available)(
  `runtime crash safety on Postgres at ${redactUrl(probe.url)}`,
  () => {
    const dir = mkdtempSync(join(tmpdir(), "rein-pg-crash-"));
    const schema = testSchemaName();
    const worker = {
      command: process.execPath,
      args: [
        "--import",
        "tsx",
        fileURLToPath(new URL("./int/crash-worker.ts", import.meta.url)),
        probe.url,
        schema,
      ],
    };
    afterAll(async () => {
      rmSync(dir, { recursive: true, force: true });
      const saver = new PostgresSaver({ connectionString: probe.url, schema });
      await saver.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await saver.close();
    });

    it("a process killed mid-step loses no finished task and a fresh process completes the step", async () => {
      await runCrashScenario(worker, "crash-1", join(dir, "marks"));
      const saver = await PostgresSaver.connect({ connectionString: probe.url, schema });
      try {
        const history = await saver.listCheckpoints(threadId("crash-1"), "");
        // input, after `fan`, after the fan-out step: each step committed exactly once.
        expect(history.map((c) => c.step)).toEqual([1, 0, -1]);
      } finally {
        await saver.close();
      }
    }, 90_000);

    it("two processes answering the same interrupt at once: exactly one applies", async () => {
      await runAnswerRace(worker, "crash-1", join(dir, "marks"));
      const saver = await PostgresSaver.connect({ connectionString: probe.url, schema });
      try {
        const answers = (await saver.listAudit({ threadId: threadId("crash-1") })).items.filter(
          (a) => a.action === "answer",
        );
        expect(answers).toHaveLength(1);
      } finally {
        await saver.close();
      }
    }, 90_000);
  },
);
