/** `ctx.once` results: first write wins, scoped by thread, task and key. */
import { expect } from "vitest";
import { taskId, threadId } from "../fixtures.ts";
import type { SpecModule } from "../suite.ts";

const T = threadId("t1");
const TASK = taskId("task-refund");

/** Specs of getOnce and putOnce. */
export const onceSpecs: SpecModule = {
  concern: "once",
  register({ spec }) {
    spec("getOnce is undefined before the first putOnce", async (saver) => {
      expect(await saver.getOnce(T, TASK, "refund")).toBeUndefined();
    });

    spec("putOnce stores the value and returns it", async (saver) => {
      expect(await saver.putOnce(T, TASK, "refund", { refundId: "rf_1", amount: 50 })).toEqual({
        value: { refundId: "rf_1", amount: 50 },
      });
      expect(await saver.getOnce(T, TASK, "refund")).toEqual({
        value: { refundId: "rf_1", amount: 50 },
      });
    });

    spec("the first write wins and later writes get the stored value back", async (saver) => {
      await saver.putOnce(T, TASK, "refund", "first");
      expect(await saver.putOnce(T, TASK, "refund", "second")).toEqual({ value: "first" });
      expect(await saver.getOnce(T, TASK, "refund")).toEqual({ value: "first" });
    });

    spec("concurrent first writes agree on one stored value", async (saver) => {
      const results = await Promise.all(
        ["a", "b", "c", "d"].map((v) => saver.putOnce(T, TASK, "race", v)),
      );
      const stored = await saver.getOnce(T, TASK, "race");
      expect(stored).toBeDefined();
      for (const result of results) expect(result).toEqual(stored);
    });

    spec("a stored null is distinguished from never run", async (saver) => {
      await saver.putOnce(T, TASK, "nothing", null);
      expect(await saver.getOnce(T, TASK, "nothing")).toEqual({ value: null });
      expect(await saver.putOnce(T, TASK, "nothing", "late")).toEqual({ value: null });
    });

    spec("results are scoped by thread, task and key", async (saver) => {
      await saver.putOnce(T, TASK, "k", 1);
      await saver.putOnce(T, TASK, "k2", 2);
      await saver.putOnce(T, taskId("task-other"), "k", 3);
      await saver.putOnce(threadId("t2"), TASK, "k", 4);
      expect(await saver.getOnce(T, TASK, "k")).toEqual({ value: 1 });
      expect(await saver.getOnce(T, TASK, "k2")).toEqual({ value: 2 });
      expect(await saver.getOnce(T, taskId("task-other"), "k")).toEqual({ value: 3 });
      expect(await saver.getOnce(threadId("t2"), TASK, "k")).toEqual({ value: 4 });
    });
  },
};
