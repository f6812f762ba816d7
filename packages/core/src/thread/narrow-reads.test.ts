import { describe, expect, it } from "vitest";
import { Command, lastValue, START, END, StateGraph } from "../index.ts";
import { MemorySaver } from "../checkpoint/memory.ts";
import {
  checkpointId,
  interruptId,
  makeCheckpoint,
  makeCommit,
  makeInterrupt,
  makeOutcome,
  pausedResult,
  taskId,
  threadId,
  writesResult,
} from "../testing/fixtures.ts";
import { runtimeOnly } from "../testing/index.ts";
import { pendingPageOf, taskInterruptsOf, taskResultKindsOf } from "./narrow-reads.ts";

const T = threadId("t1");
const C1 = checkpointId(1);

/** A thread with a step of three tasks: one finished, two paused on three questions (one answered). */
async function populated(): Promise<MemorySaver> {
  const store = new MemorySaver();
  await store.commitStep(makeCommit(makeCheckpoint("t1", C1), null));
  await store.putTaskOutcome(makeOutcome("t1", C1, writesResult("task-w", [["a", 1]])));
  const asked = (task: string, ids: string[]) =>
    makeOutcome("t1", C1, pausedResult(task), {
      interrupts: ids.map((id, order) =>
        makeInterrupt("t1", id, { taskId: taskId(task), order, slot: `o:${order}` }),
      ),
    });
  await store.putTaskOutcome(asked("task-a", ["i1", "i2"]));
  await store.putTaskOutcome(asked("task-b", ["i3"]));
  const answered = await store.answerInterrupts({
    threadId: T,
    answers: [{ id: interruptId("i2"), value: "yes" }],
    wake: [],
    actor: "tester",
    action: "answer",
  });
  expect(answered.ok).toBe(true);
  return store;
}

describe("the runtime's narrow reads on a store without narrowReads", () => {
  it("give what the capability's members give, picked from the whole reads", async () => {
    const store = await populated();
    const plain = runtimeOnly(store);
    for (const limit of [0, 1, 5])
      expect(await pendingPageOf(plain, T, limit)).toEqual(
        await store.getPendingInterrupts(T, limit),
      );
    expect((await pendingPageOf(plain, T, 1)).total).toBe(2);
    for (const tasks of [[], ["task-a"], ["task-b", "task-a"], ["task-w"]].map((ids) =>
      ids.map(taskId),
    ))
      expect(await taskInterruptsOf(plain, T, tasks)).toEqual(
        await store.getTaskInterrupts(T, tasks),
      );
    expect((await taskInterruptsOf(plain, T, [taskId("task-a")])).map((row) => row.id)).toEqual([
      "i1",
      "i2",
    ]);
    expect(await taskResultKindsOf(plain, T, "", C1)).toEqual(
      await store.getTaskResultKinds(T, "", C1),
    );
    expect(await taskResultKindsOf(plain, T, "", C1)).toEqual([
      { taskId: "task-w", kind: "writes" },
      { taskId: "task-a", kind: "paused" },
      { taskId: "task-b", kind: "paused" },
    ]);
  });

  it("run a graph that pauses and resumes on a runtime-only store", async () => {
    const store = runtimeOnly(new MemorySaver());
    const graph = new StateGraph({ n: lastValue<number>(() => 0), answer: lastValue<string>() })
      .addNode("prepare", (s) => ({ n: s.n + 1 }))
      .addNode("ask", (_s, ctx) => ({ answer: ctx.interrupt<string>("ok?") }))
      .addEdge(START, "prepare")
      .addEdge("prepare", "ask")
      .addEdge("ask", END)
      .compile({ checkpointer: store });
    const paused = await graph.invoke({}, { threadId: "runtime-only" });
    expect(paused.status).toBe("interrupted");
    expect(paused.interrupts.map((i) => i.payload)).toEqual(["ok?"]);
    const done = await graph.resume({ threadId: "runtime-only" }, Command.resume("yes"));
    expect(done.status).toBe("done");
    expect(done.values).toEqual({ n: 1, answer: "yes" });
  });
});
