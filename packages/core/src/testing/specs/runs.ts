/** Runs: the run tree's rows, replaced as their status changes. */
import { expect } from "vitest";
import { at, makeRun, runId, taskId, threadId } from "../fixtures.ts";
import type { SpecModule } from "../suite.ts";

/** Specs of putRun, getRun and listRuns. */
export const runSpecs: SpecModule = {
  concern: "runs",
  register({ spec }) {
    spec("putRun then getRun returns the record; unknown ids are undefined", async (saver) => {
      const run = makeRun("t1", "root", {
        options: { interruptBefore: ["refund"], interruptAfter: ["supervisor/*/email"] },
      });
      await saver.putRun(run);
      expect(await saver.getRun(runId("root"))).toEqual(run);
      expect(await saver.getRun(runId("nope"))).toBeUndefined();
    });

    spec(
      "putRun replaces the record of an existing run",
      async (saver) => {
        await saver.putRun(makeRun("t1", "root", { status: "running" }));
        const failed = makeRun("t1", "root", {
          status: "error",
          updatedAt: at(9),
          error: { name: "NodeError", message: "boom", code: "node_failed", node: "refund" },
        });
        await saver.putRun(failed);
        expect(await saver.getRun(runId("root"))).toEqual(failed);
        expect(await saver.listRuns(threadId("t1"))).toEqual([failed]);
      },
      ["threadHistory"],
    );

    spec(
      "listRuns returns the thread's runs oldest first, with parent links",
      async (saver) => {
        const root = makeRun("t1", "root", { createdAt: at(1) });
        const child = makeRun("t1", "child", {
          createdAt: at(2),
          parentRunId: runId("root"),
          parentTaskId: taskId("task-sup"),
          graph: "research_agent",
          namespace: ["supervisor", "research_agent"],
          stream: "child",
        });
        const second = makeRun("t1", "root-2", { createdAt: at(3), status: "done" });
        await saver.putRun(second);
        await saver.putRun(child);
        await saver.putRun(root);
        await saver.putRun(makeRun("t2", "elsewhere", { createdAt: at(0) }));
        expect(await saver.listRuns(threadId("t1"))).toEqual([root, child, second]);
        expect(await saver.listRuns(threadId("none"))).toEqual([]);
      },
      ["threadHistory"],
    );
  },
};
