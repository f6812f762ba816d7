/**
 * Crash safety of the runtime on SQLite, with real processes: SIGKILL in the middle of a superstep
 * loses no finished task and re-runs none, and two processes answering one interrupt at the same
 * moment leave exactly one answer.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runAnswerRace, runCrashScenario } from "@rein/core/testing/runtime";
import { SqliteSaver } from "./saver.ts";

const dir = mkdtempSync(join(tmpdir(), "rein-crash-"));
const db = join(dir, "rein.db");
const worker = {
  command: process.execPath,
  args: ["--import", "tsx", fileURLToPath(new URL("./int/crash-worker.ts", import.meta.url)), db],
};
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("runtime crash safety on SQLite", () => {
  it("a process killed mid-step loses no finished task and a fresh process completes the step", async () => {
    await runCrashScenario(worker, "crash-1", join(dir, "marks"));
    const saver = new SqliteSaver({ path: db });
    try {
      const history = await saver.listCheckpoints("crash-1" as never, "");
      // input, after `fan`, after the fan-out step: each step committed exactly once.
      expect(history.map((c) => c.step)).toEqual([1, 0, -1]);
    } finally {
      await saver.close();
    }
  }, 90_000);

  it("two processes answering the same interrupt at once: exactly one applies", async () => {
    await runAnswerRace(worker, "crash-1", join(dir, "marks"));
    const saver = new SqliteSaver({ path: db });
    try {
      const answers = (await saver.listAudit({ threadId: "crash-1" as never })).items.filter(
        (a) => a.action === "answer",
      );
      expect(answers).toHaveLength(1);
    } finally {
      await saver.close();
    }
  }, 90_000);
});
