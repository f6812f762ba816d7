/** Task results: idempotent per-task outcomes with their interrupts, within an uncommitted step. */
import { expect } from "vitest";
import { NonSerializableError } from "../../errors.ts";
import {
  at,
  checkpointId,
  interruptId,
  makeInterrupt,
  makeOutcome,
  makeRun,
  runId,
  pausedResult,
  threadId,
  writesResult,
} from "../fixtures.ts";
import type { SpecModule } from "../suite.ts";

const T = threadId("t1");
const C1 = checkpointId(1);

/** Specs of putTaskOutcome and getTaskResults. */
export const taskResultSpecs: SpecModule = {
  concern: "task-results",
  register({ spec }) {
    spec("putTaskOutcome stores writes that getTaskResults returns", async (saver) => {
      const result = writesResult("task-a", [
        ["messages", [{ role: "ai", text: "hi" }]],
        ["count", 2],
      ]);
      await saver.putTaskOutcome(makeOutcome("t1", C1, result));
      expect(await saver.getTaskResults(T, "", C1)).toEqual([result]);
    });

    spec("results keep gotos and sends", async (saver) => {
      const result = {
        ...writesResult("task-a"),
        gotos: ["b", "c"],
        sends: [{ node: "worker", arg: { item: 1 } }],
      };
      await saver.putTaskOutcome(makeOutcome("t1", C1, result));
      expect(await saver.getTaskResults(T, "", C1)).toEqual([result]);
    });

    spec("results are scoped to their step (checkpoint) and stream", async (saver) => {
      await saver.putTaskOutcome(makeOutcome("t1", C1, writesResult("task-a")));
      await saver.putTaskOutcome(makeOutcome("t1", checkpointId(2), writesResult("task-b")));
      await saver.putTaskOutcome(
        makeOutcome("t1", C1, writesResult("task-c"), { stream: "child" }),
      );
      expect((await saver.getTaskResults(T, "", C1)).map((r) => r.taskId)).toEqual(["task-a"]);
      expect((await saver.getTaskResults(T, "child", C1)).map((r) => r.taskId)).toEqual(["task-c"]);
      expect(await saver.getTaskResults(T, "", checkpointId(3))).toEqual([]);
    });

    spec("results of several tasks come back in the order first stored", async (saver) => {
      for (const task of ["task-c", "task-a", "task-b"]) {
        await saver.putTaskOutcome(makeOutcome("t1", C1, writesResult(task)));
      }
      expect((await saver.getTaskResults(T, "", C1)).map((r) => r.taskId)).toEqual([
        "task-c",
        "task-a",
        "task-b",
      ]);
    });

    spec(
      "the first writes result wins: a second one for the task is ignored",
      async (saver) => {
        const first = writesResult("task-a", [["x", 1]]);
        await saver.putTaskOutcome(makeOutcome("t1", C1, first));
        await saver.putTaskOutcome(
          makeOutcome("t1", C1, writesResult("task-a", [["x", 2]]), {
            interrupts: [makeInterrupt("t1", "i-late")],
          }),
        );
        expect(await saver.getTaskResults(T, "", C1)).toEqual([first]);
        // The ignored outcome's interrupts are ignored with it.
        expect(await saver.getInterrupt(interruptId("i-late"))).toBeUndefined();
      },
      ["interruptQueue"],
    );

    spec("a paused result is replaced by a writes result", async (saver) => {
      await saver.putTaskOutcome(makeOutcome("t1", C1, pausedResult("task-a")));
      expect(await saver.getTaskResults(T, "", C1)).toEqual([pausedResult("task-a")]);
      const done = writesResult("task-a", [["approved", true]], "review");
      await saver.putTaskOutcome(makeOutcome("t1", C1, done));
      expect(await saver.getTaskResults(T, "", C1)).toEqual([done]);
    });

    spec("a paused outcome after a writes result is ignored", async (saver) => {
      const done = writesResult("task-a", [["x", 1]]);
      await saver.putTaskOutcome(makeOutcome("t1", C1, done));
      await saver.putTaskOutcome(makeOutcome("t1", C1, pausedResult("task-a")));
      expect(await saver.getTaskResults(T, "", C1)).toEqual([done]);
    });

    spec(
      "interrupts are stored with the outcome that raised them",
      async (saver) => {
        const i0 = makeInterrupt("t1", "i0", { order: 0, slot: "o:0" });
        const i1 = makeInterrupt("t1", "i1", { order: 1, slot: "o:1", payload: { q: "second" } });
        await saver.putTaskOutcome(
          makeOutcome("t1", C1, pausedResult("task-1"), { interrupts: [i0, i1] }),
        );
        expect(await saver.getInterrupt(i0.id)).toEqual(i0);
        expect(await saver.getInterrupt(i1.id)).toEqual(i1);
        expect(await saver.getTaskResults(T, "", C1)).toEqual([pausedResult("task-1")]);
      },
      ["interruptQueue"],
    );

    spec(
      "a re-run replaces an interrupt row that has the same id",
      async (saver) => {
        const first = makeInterrupt("t1", "i0", { payload: { q: "v1" } });
        await saver.putTaskOutcome(
          makeOutcome("t1", C1, pausedResult("task-1"), { interrupts: [first] }),
        );
        const again = makeInterrupt("t1", "i0", {
          payload: { q: "v2" },
          checkpointId: checkpointId(2),
        });
        await saver.putTaskOutcome(
          makeOutcome("t1", C1, pausedResult("task-1"), { interrupts: [again] }),
        );
        expect(await saver.getInterrupt(first.id)).toEqual(again);
        expect(await saver.getThreadInterrupts(T)).toHaveLength(1);
      },
      ["interruptQueue"],
    );

    spec(
      "superseded ids are marked superseded with the outcome, answered ones too; cancelled ones are left",
      async (saver) => {
        const old = makeInterrupt("t1", "i-old");
        const settled = makeInterrupt("t1", "i-settled", { status: "answered", answer: "yes" });
        const cancelled = makeInterrupt("t1", "i-cancelled", { status: "cancelled" });
        await saver.putTaskOutcome(
          makeOutcome("t1", C1, pausedResult("task-1"), { interrupts: [old, settled, cancelled] }),
        );
        const replacement = makeInterrupt("t1", "i-new", { revision: 1, payload: { amount: 500 } });
        await saver.putTaskOutcome(
          makeOutcome("t1", C1, pausedResult("task-1"), {
            interrupts: [replacement],
            superseded: [old.id, settled.id, cancelled.id],
          }),
        );
        expect((await saver.getInterrupt(old.id))?.status).toBe("superseded");
        expect((await saver.getInterrupt(settled.id))?.status).toBe("superseded");
        expect((await saver.getInterrupt(cancelled.id))?.status).toBe("cancelled");
        expect((await saver.getInterrupt(replacement.id))?.status).toBe("pending");
      },
      ["interruptQueue"],
    );

    spec(
      "run rows go with an applied outcome and are dropped with an ignored one",
      async (saver) => {
        await saver.putRun(makeRun("t1", "r1"));
        await saver.putTaskOutcome(
          makeOutcome("t1", C1, pausedResult("task-a"), {
            runs: [makeRun("t1", "r1", { status: "interrupted", updatedAt: at(5) })],
          }),
        );
        expect(await saver.getRun(runId("r1"))).toMatchObject({
          status: "interrupted",
          updatedAt: at(5),
        });
        await saver.putTaskOutcome(makeOutcome("t1", C1, writesResult("task-b")));
        // task-b already has its writes: this outcome is ignored, and the run row with it.
        await saver.putTaskOutcome(
          makeOutcome("t1", C1, pausedResult("task-b"), {
            runs: [makeRun("t1", "r1", { status: "error", updatedAt: at(9) })],
          }),
        );
        expect((await saver.getRun(runId("r1")))?.status).toBe("interrupted");
      },
    );

    spec("a done run is not changed by an outcome's run row", async (saver) => {
      await saver.putRun(makeRun("t1", "r1", { status: "done" }));
      await saver.putTaskOutcome(
        makeOutcome("t1", C1, pausedResult("task-a"), {
          runs: [makeRun("t1", "r1", { status: "interrupted" })],
        }),
      );
      expect((await saver.getRun(runId("r1")))?.status).toBe("done");
      expect(await saver.getTaskResults(T, "", C1)).toEqual([pausedResult("task-a")]);
    });

    spec(
      "an outcome with a value the serializer refuses writes nothing",
      async (saver) => {
        const bad = writesResult("task-a", [["x", () => 1]]);
        await expect(
          saver.putTaskOutcome(
            makeOutcome("t1", C1, bad, { interrupts: [makeInterrupt("t1", "i-bad")] }),
          ),
        ).rejects.toBeInstanceOf(NonSerializableError);
        expect(await saver.getTaskResults(T, "", C1)).toEqual([]);
        expect(await saver.getInterrupt(interruptId("i-bad"))).toBeUndefined();
      },
      ["interruptQueue"],
    );
  },
};
