/**
 * The narrow reads an answer and its continuation make, so their cost follows what they name
 * rather than how many questions the thread holds: interrupts by id, the oldest pending page with
 * the count, result kinds without bodies, interrupts by task.
 */
import { expect } from "vitest";
import {
  at,
  checkpointId,
  interruptId,
  makeInterrupt,
  makeOutcome,
  pausedResult,
  taskId,
  threadId,
  writesResult,
} from "../fixtures.ts";
import type { SpecModule } from "../suite.ts";

const T = threadId("t1");
const C1 = checkpointId(1);

/** Specs of getInterrupts, getPendingInterrupts, getTaskResultKinds and getTaskInterrupts. */
export const narrowReadSpecs: SpecModule = {
  concern: "narrow-reads",
  register({ spec }) {
    spec(
      "getInterrupts returns the named interrupts of any thread and skips unknown ids",
      async (saver) => {
        await saver.putTaskOutcome(
          makeOutcome("t1", C1, pausedResult("task-1"), {
            interrupts: [makeInterrupt("t1", "i1"), makeInterrupt("t1", "i2", { order: 1 })],
          }),
        );
        await saver.putTaskOutcome(
          makeOutcome("t2", C1, pausedResult("task-1"), {
            interrupts: [makeInterrupt("t2", "j1")],
          }),
        );
        const got = await saver.getInterrupts([
          interruptId("i2"),
          interruptId("j1"),
          interruptId("nope"),
        ]);
        expect(got.map((i) => i.id).sort()).toEqual(["i2", "j1"]);
        expect(got.find((i) => i.id === "i2")).toEqual(makeInterrupt("t1", "i2", { order: 1 }));
        expect(await saver.getInterrupts([])).toEqual([]);
      },
    );

    spec(
      "getPendingInterrupts gives the oldest page of pending interrupts and their count",
      async (saver) => {
        const records = [3, 1, 4, 0, 2].map((s) =>
          makeInterrupt("t1", `i${s}`, { createdAt: at(s), taskId: taskId(`task-${s}`) }),
        );
        for (const record of records)
          await saver.putTaskOutcome(
            makeOutcome("t1", C1, pausedResult(record.taskId), { interrupts: [record] }),
          );
        await saver.answerInterrupts({
          threadId: T,
          answers: [{ id: interruptId("i1"), value: "yes" }],
          wake: [],
          actor: "tester",
          action: "answer",
        });
        const page = await saver.getPendingInterrupts(T, 2);
        expect(page.total).toBe(4);
        expect(page.items.map((i) => i.id)).toEqual(["i0", "i2"]);
        expect(page.items[0]).toEqual(records.find((r) => r.id === "i0"));
        expect((await saver.getPendingInterrupts(T, 10)).items.map((i) => i.id)).toEqual([
          "i0",
          "i2",
          "i3",
          "i4",
        ]);
        expect(await saver.getPendingInterrupts(threadId("other"), 10)).toEqual({
          items: [],
          total: 0,
        });
      },
      ["narrowReads"],
    );

    spec(
      "getTaskResultKinds gives each result's task and kind in the order first stored",
      async (saver) => {
        await saver.putTaskOutcome(makeOutcome("t1", C1, writesResult("task-b", [["x", 1]])));
        await saver.putTaskOutcome(makeOutcome("t1", C1, pausedResult("task-a")));
        await saver.putTaskOutcome(makeOutcome("t1", checkpointId(2), pausedResult("task-c")));
        await saver.putTaskOutcome(
          makeOutcome("t1", C1, writesResult("task-d"), { stream: "child" }),
        );
        expect(await saver.getTaskResultKinds(T, "", C1)).toEqual([
          { taskId: "task-b", kind: "writes" },
          { taskId: "task-a", kind: "paused" },
        ]);
        expect(await saver.getTaskResultKinds(T, "", checkpointId(3))).toEqual([]);
      },
      ["narrowReads"],
    );

    spec(
      "getTaskInterrupts gives the rows of the named tasks of a thread, every status, oldest first",
      async (saver) => {
        const a0 = makeInterrupt("t1", "a0", { taskId: taskId("task-a"), createdAt: at(2) });
        const a1 = makeInterrupt("t1", "a1", {
          taskId: taskId("task-a"),
          createdAt: at(1),
          order: 1,
        });
        const b0 = makeInterrupt("t1", "b0", { taskId: taskId("task-b"), createdAt: at(0) });
        const c0 = makeInterrupt("t1", "c0", { taskId: taskId("task-c"), createdAt: at(0) });
        await saver.putTaskOutcome(
          makeOutcome("t1", C1, pausedResult("task-a"), { interrupts: [a0, a1] }),
        );
        await saver.putTaskOutcome(
          makeOutcome("t1", C1, pausedResult("task-b"), { interrupts: [b0] }),
        );
        await saver.putTaskOutcome(
          makeOutcome("t1", C1, pausedResult("task-c"), { interrupts: [c0] }),
        );
        await saver.putTaskOutcome(
          makeOutcome("t2", C1, pausedResult("task-a"), {
            interrupts: [makeInterrupt("t2", "x0", { taskId: taskId("task-a") })],
          }),
        );
        await saver.answerInterrupts({
          threadId: T,
          answers: [{ id: interruptId("a1"), value: "ok" }],
          wake: [],
          actor: "tester",
          action: "answer",
        });
        const rows = await saver.getTaskInterrupts(T, [taskId("task-a"), taskId("task-b")]);
        expect(rows.map((i) => [i.id, i.status])).toEqual([
          ["b0", "pending"],
          ["a1", "answered"],
          ["a0", "pending"],
        ]);
        expect(rows.find((i) => i.id === "a1")?.answer).toBe("ok");
        expect(rows.find((i) => i.id === "b0")).toEqual(b0);
        expect(await saver.getTaskInterrupts(T, [])).toEqual([]);
      },
      ["narrowReads"],
    );
  },
};
