import { describe, expect, it } from "vitest";
import {
  checkpointId,
  makeCheckpoint,
  makeCommit,
  makeInterrupt,
  makeOutcome,
  makeRun,
  pausedResult,
  runId,
  threadId,
} from "@rein/core/testing";
import { SqliteSaver } from "./saver.ts";

describe("SQLite row encoding", () => {
  it("stores no column twice, and still reads records written whole by earlier versions", async () => {
    const saver = new SqliteSaver({ path: ":memory:" });
    try {
      const c1 = checkpointId(1);
      const interrupt = makeInterrupt("t1", "i1", { payload: { q: 1 } });
      const run = makeRun("t1", "run-1", { status: "interrupted" });
      const result = pausedResult("task-1");
      await saver.commitStep(makeCommit(makeCheckpoint("t1", c1), null, { runs: [run] }));
      await saver.putTaskOutcome(makeOutcome("t1", c1, result, { interrupts: [interrupt] }));

      const stored = saver.db.prepare("SELECT record FROM interrupts").get()?.["record"];
      expect(JSON.parse(String(stored))).not.toHaveProperty("threadId");
      const storedRun = saver.db.prepare("SELECT record FROM runs").get()?.["record"];
      expect(JSON.parse(String(storedRun))).not.toHaveProperty("status");

      // Rows as earlier versions wrote them: the whole record encoded.
      saver.db.prepare("UPDATE interrupts SET record = ?").run(JSON.stringify(interrupt));
      saver.db.prepare("UPDATE runs SET record = ?").run(JSON.stringify(run));
      saver.db.prepare("UPDATE task_results SET value = ?").run(JSON.stringify(result));
      expect(await saver.getInterrupt(interrupt.id)).toEqual(interrupt);
      expect(await saver.getRun(runId("run-1"))).toEqual(run);
      expect(await saver.getTaskResults(threadId("t1"), "", c1)).toEqual([result]);
    } finally {
      await saver.close();
    }
  });
});
