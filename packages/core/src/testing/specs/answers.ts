/** answerInterrupts: all-or-nothing answers, task wake-up, audit, request ids, head checks, races. */
import { expect } from "vitest";
import type { AnswerBatch, Checkpointer } from "../../checkpoint/types.ts";
import type { InterruptId } from "../../ids.ts";
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
} from "../fixtures.ts";
import type { SpecModule } from "../suite.ts";
import { ROOT_STREAM } from "../../keys.ts";

const T = threadId("t1");
const C1 = checkpointId(1);

/**
 * A thread at checkpoint c1 whose tasks `task-<id>` are each paused on interrupt `<id>`, plus a
 * finished task `task-done`.
 */
async function pausedThread(saver: Checkpointer, ids: string[]): Promise<void> {
  await saver.commitStep(makeCommit(makeCheckpoint("t1", C1), null));
  await saver.putTaskOutcome(makeOutcome("t1", C1, writesResult("task-done", [["x", 1]])));
  for (const id of ids) {
    await saver.putTaskOutcome(
      makeOutcome("t1", C1, pausedResult(`task-${id}`), {
        interrupts: [makeInterrupt("t1", id, { taskId: taskId(`task-${id}`) })],
      }),
    );
  }
}

/** A batch of thread t1 by alice, answering and waking nothing unless `over` says so. */
export function batch(over: Partial<AnswerBatch> = {}): AnswerBatch {
  return {
    threadId: T,
    answers: [],
    wake: [],
    actor: "alice@example.com",
    action: "answer",
    ...over,
  };
}

/** The wake reference of task `task-<id>` at c1. */
export function wake(id: string): {
  stream: string;
  checkpointId: typeof C1;
  taskId: ReturnType<typeof taskId>;
} {
  return { stream: ROOT_STREAM, checkpointId: C1, taskId: taskId(`task-${id}`) };
}

async function statusOf(saver: Checkpointer, id: string): Promise<string | undefined> {
  return (await saver.getInterrupt(interruptId(id)))?.status;
}

async function taskIds(saver: Checkpointer): Promise<string[]> {
  return (await saver.getTaskResults(T, "", C1)).map((r) => r.taskId).sort();
}

/** Specs of answerInterrupts and putRequestResult. */
export const answerSpecs: SpecModule = {
  concern: "answers",
  register({ spec }) {
    spec(
      "answering marks the interrupt answered with value, actor and time",
      async (saver) => {
        await pausedThread(saver, ["i1"]);
        const before = Date.now();
        const outcome = await saver.answerInterrupts(
          batch({
            answers: [{ id: interruptId("i1"), value: { approved: true } }],
            wake: [wake("i1")],
          }),
        );
        expect(outcome).toEqual({ ok: true });
        const row = await saver.getInterrupt(interruptId("i1"));
        expect(row?.status).toBe("answered");
        expect(row?.answer).toEqual({ approved: true });
        expect(row?.answeredBy).toBe("alice@example.com");
        const answeredAt = Date.parse(row?.answeredAt ?? "");
        expect(answeredAt).toBeGreaterThanOrEqual(before - 1000);
        expect(answeredAt).toBeLessThanOrEqual(Date.now() + 1000);
      },
      ["interruptQueue"],
    );

    spec(
      "an undefined answer is stored as null",
      async (saver) => {
        await pausedThread(saver, ["i1"]);
        await saver.answerInterrupts(
          batch({ answers: [{ id: interruptId("i1"), value: undefined }] }),
        );
        const row = await saver.getInterrupt(interruptId("i1"));
        expect(row?.status).toBe("answered");
        expect(row?.answer).toBeNull();
      },
      ["interruptQueue"],
    );

    spec(
      "answering wakes the listed tasks by deleting their paused results only",
      async (saver) => {
        await pausedThread(saver, ["i1", "i2"]);
        await saver.answerInterrupts(
          batch({
            answers: [{ id: interruptId("i1"), value: 1 }],
            // task-done has a writes result: waking it must not delete it.
            wake: [
              wake("i1"),
              { stream: ROOT_STREAM, checkpointId: C1, taskId: taskId("task-done") },
            ],
          }),
        );
        expect(await taskIds(saver)).toEqual(["task-done", "task-i2"]);
        expect(await statusOf(saver, "i2")).toBe("pending");
      },
      ["interruptQueue"],
    );

    spec(
      "all or nothing: one interrupt not pending means nothing is written",
      async (saver) => {
        await pausedThread(saver, ["i1", "i2"]);
        await saver.answerInterrupts(
          batch({ answers: [{ id: interruptId("i2"), value: "first" }] }),
        );
        const auditBefore = (await saver.listAudit({ threadId: T })).items.length;
        const outcome = await saver.answerInterrupts(
          batch({
            answers: [
              { id: interruptId("i1"), value: "x" },
              { id: interruptId("i2"), value: "y" },
            ],
            wake: [wake("i1"), wake("i2")],
            requestId: "req-1",
          }),
        );
        expect(outcome).toEqual({ ok: false, reason: "not_pending", ids: [interruptId("i2")] });
        expect(await statusOf(saver, "i1")).toBe("pending");
        expect((await saver.getInterrupt(interruptId("i2")))?.answer).toBe("first");
        expect(await taskIds(saver)).toEqual(["task-done", "task-i1", "task-i2"]);
        expect((await saver.listAudit({ threadId: T })).items).toHaveLength(auditBefore);
      },
      ["auditChain", "interruptQueue"],
    );

    spec(
      "an unknown interrupt id counts as not pending",
      async (saver) => {
        await pausedThread(saver, ["i1"]);
        const outcome = await saver.answerInterrupts(
          batch({
            answers: [
              { id: interruptId("i1"), value: 1 },
              { id: interruptId("ghost"), value: 2 },
            ],
          }),
        );
        expect(outcome).toEqual({ ok: false, reason: "not_pending", ids: [interruptId("ghost")] });
        expect(await statusOf(saver, "i1")).toBe("pending");
      },
      ["interruptQueue"],
    );

    spec(
      "cancel moves pending interrupts to cancelled in the same batch",
      async (saver) => {
        await pausedThread(saver, ["i1", "i2", "i3"]);
        const outcome = await saver.answerInterrupts(
          batch({
            answers: [{ id: interruptId("i1"), value: "ok" }],
            cancel: [interruptId("i2")],
            wake: [wake("i1"), wake("i2")],
          }),
        );
        expect(outcome).toEqual({ ok: true });
        expect(await statusOf(saver, "i1")).toBe("answered");
        expect(await statusOf(saver, "i2")).toBe("cancelled");
        expect(await statusOf(saver, "i3")).toBe("pending");
        const failed = await saver.answerInterrupts(
          batch({ cancel: [interruptId("i2"), interruptId("i3")] }),
        );
        expect(failed).toEqual({ ok: false, reason: "not_pending", ids: [interruptId("i2")] });
        expect(await statusOf(saver, "i3")).toBe("pending");
      },
      ["interruptQueue"],
    );

    spec(
      "one audit record per interrupt, with the actor and the action",
      async (saver) => {
        await pausedThread(saver, ["i1", "i2", "i3"]);
        await saver.answerInterrupts(
          batch({
            answers: [
              { id: interruptId("i1"), value: "a" },
              { id: interruptId("i2"), value: "b" },
            ],
            cancel: [interruptId("i3")],
            actor: "bob@example.com",
          }),
        );
        await pausedThread2(saver);
        await saver.answerInterrupts(
          batch({
            answers: [{ id: interruptId("i4"), value: null }],
            action: "timeout",
            actor: "timer",
          }),
        );
        const { items } = await saver.listAudit({ threadId: T });
        const lines = items.map((a) => [a.interruptId, a.action, a.actor, a.runId]);
        expect(lines).toHaveLength(4);
        expect(lines.slice(0, 3)).toEqual(
          expect.arrayContaining([
            ["i1", "answer", "bob@example.com", "run-1"],
            ["i2", "answer", "bob@example.com", "run-1"],
            ["i3", "cancel", "bob@example.com", "run-1"],
          ]),
        );
        expect(lines[3]).toEqual(["i4", "timeout", "timer", "run-1"]);
        for (const item of items) {
          expect(item.threadId).toBe("t1");
          expect(typeof item.id).toBe("string");
          expect(Number.isNaN(Date.parse(item.createdAt))).toBe(false);
        }
        expect(new Set(items.map((a) => a.id)).size).toBe(4);
      },
      ["auditChain"],
    );

    spec(
      "an id repeated in one batch counts once: the first answer wins, one audit line",
      async (saver) => {
        await pausedThread(saver, ["i1", "i2"]);
        const outcome = await saver.answerInterrupts(
          batch({
            answers: [
              { id: interruptId("i1"), value: "first" },
              { id: interruptId("i2"), value: "other" },
              { id: interruptId("i1"), value: "second" },
            ],
            // Answered and cancelled in one batch: the answer wins.
            cancel: [interruptId("i2"), interruptId("i2")],
            wake: [wake("i1"), wake("i1")],
          }),
        );
        expect(outcome).toEqual({ ok: true });
        const i1 = await saver.getInterrupt(interruptId("i1"));
        expect([i1?.status, i1?.answer]).toEqual(["answered", "first"]);
        const i2 = await saver.getInterrupt(interruptId("i2"));
        expect([i2?.status, i2?.answer]).toEqual(["answered", "other"]);
        const { items } = await saver.listAudit({ threadId: T });
        expect(items.map((a) => [a.interruptId, a.action])).toEqual([
          ["i1", "answer"],
          ["i2", "answer"],
        ]);
        expect(items[0]?.data).toEqual({ value: "first", requestId: null });
        expect(await taskIds(saver)).toEqual(["task-done", "task-i2"]);
      },
      ["auditChain", "interruptQueue"],
    );

    spec("a repeated id that is not pending is reported once", async (saver) => {
      await pausedThread(saver, ["i1"]);
      const outcome = await saver.answerInterrupts(
        batch({
          answers: [
            { id: interruptId("gone"), value: 1 },
            { id: interruptId("gone"), value: 2 },
          ],
          cancel: [interruptId("gone")],
        }),
      );
      expect(outcome).toEqual({ ok: false, reason: "not_pending", ids: [interruptId("gone")] });
    });

    spec(
      "a repeated request id is refused as duplicate with the stored result",
      async (saver) => {
        await pausedThread(saver, ["i1", "i2"]);
        const first = batch({ answers: [{ id: interruptId("i1"), value: 1 }], requestId: "req-1" });
        expect(await saver.answerInterrupts(first)).toEqual({ ok: true });
        // Before the caller stored an outcome for it, the duplicate carries no result.
        const early = await saver.answerInterrupts(
          batch({ answers: [{ id: interruptId("i2"), value: 2 }], requestId: "req-1" }),
        );
        expect(early).toEqual({ ok: false, reason: "duplicate", result: undefined });
        expect(await statusOf(saver, "i2")).toBe("pending");
        expect(await saver.getRequestResult("req-1")).toEqual({ result: undefined });
        expect(await saver.getRequestResult("req-unknown")).toBeUndefined();
        const stored = { status: "done", values: { at: new Date(0) } };
        await saver.putRequestResult("req-1", stored);
        expect(await saver.getRequestResult("req-1")).toEqual({ result: stored });
        expect(await saver.answerInterrupts(first)).toEqual({
          ok: false,
          reason: "duplicate",
          result: stored,
        });
      },
      ["interruptQueue"],
    );

    spec("a refused batch does not consume its request id", async (saver) => {
      await pausedThread(saver, ["i1", "i2"]);
      await saver.answerInterrupts(batch({ answers: [{ id: interruptId("i1"), value: 1 }] }));
      const refused = await saver.answerInterrupts(
        batch({ answers: [{ id: interruptId("i1"), value: 2 }], requestId: "req-9" }),
      );
      expect(refused).toMatchObject({ ok: false, reason: "not_pending" });
      const retried = await saver.answerInterrupts(
        batch({ answers: [{ id: interruptId("i2"), value: 2 }], requestId: "req-9" }),
      );
      expect(retried).toEqual({ ok: true });
    });

    spec(
      "expectedHead that is not the head is refused as head_moved and writes nothing",
      async (saver) => {
        await pausedThread(saver, ["i1"]);
        await saver.commitStep(
          makeCommit(makeCheckpoint("t1", checkpointId(2), { parentId: C1 }), C1),
        );
        const outcome = await saver.answerInterrupts(
          batch({
            answers: [{ id: interruptId("i1"), value: 1 }],
            wake: [wake("i1")],
            expectedHead: { stream: ROOT_STREAM, checkpointId: C1 },
            requestId: "req-h",
          }),
        );
        expect(outcome).toEqual({
          ok: false,
          reason: "head_moved",
          headCheckpointId: checkpointId(2),
        });
        expect(await statusOf(saver, "i1")).toBe("pending");
        expect(await taskIds(saver)).toContain("task-i1");
        const ok = await saver.answerInterrupts(
          batch({
            answers: [{ id: interruptId("i1"), value: 1 }],
            expectedHead: { stream: ROOT_STREAM, checkpointId: checkpointId(2) },
            requestId: "req-h",
          }),
        );
        expect(ok).toEqual({ ok: true });
      },
      ["interruptQueue"],
    );

    spec("expectedHead on an empty stream reports a null head", async (saver) => {
      await pausedThread(saver, ["i1"]);
      const outcome = await saver.answerInterrupts(
        batch({
          answers: [{ id: interruptId("i1"), value: 1 }],
          expectedHead: { stream: "no-such-stream", checkpointId: C1 },
        }),
      );
      expect(outcome).toEqual({ ok: false, reason: "head_moved", headCheckpointId: null });
    });

    spec(
      "two concurrent answers to one interrupt: exactly one succeeds",
      async (saver) => {
        await pausedThread(saver, ["i1"]);
        const contenders = ["alice", "bob", "carol"].map((actor) =>
          saver.answerInterrupts(
            batch({
              answers: [{ id: interruptId("i1"), value: actor }],
              wake: [wake("i1")],
              actor,
            }),
          ),
        );
        const outcomes = await Promise.all(contenders);
        const winners = outcomes.flatMap((o, i) => (o.ok ? [i] : []));
        expect(winners).toHaveLength(1);
        for (const o of outcomes) {
          if (!o.ok)
            expect(o).toEqual({ ok: false, reason: "not_pending", ids: [interruptId("i1")] });
        }
        const row = await saver.getInterrupt(interruptId("i1"));
        const winner = ["alice", "bob", "carol"][winners[0] as number];
        expect(row?.answer).toBe(winner);
        expect(row?.answeredBy).toBe(winner);
        expect((await saver.listAudit({ threadId: T })).items).toHaveLength(1);
      },
      ["auditChain", "interruptQueue"],
    );

    spec(
      "concurrent batches over overlapping interrupts never both apply",
      async (saver) => {
        await pausedThread(saver, ["i1", "i2", "i3"]);
        const ids = (...names: string[]): InterruptId[] => names.map(interruptId);
        const [a, b] = await Promise.all([
          saver.answerInterrupts(
            batch({ answers: ids("i1", "i2").map((id) => ({ id, value: "A" })) }),
          ),
          saver.answerInterrupts(
            batch({ answers: ids("i2", "i3").map((id) => ({ id, value: "B" })) }),
          ),
        ]);
        expect([a.ok, b.ok].filter(Boolean)).toHaveLength(1);
        const answers = await Promise.all(
          ["i1", "i2", "i3"].map(async (id) => (await saver.getInterrupt(interruptId(id)))?.answer),
        );
        expect(answers).toEqual(a.ok ? ["A", "A", undefined] : [undefined, "B", "B"]);
      },
      ["interruptQueue"],
    );
  },
};

/** Adds a fourth paused interrupt `i4` to the thread of {@link pausedThread}. */
async function pausedThread2(saver: Checkpointer): Promise<void> {
  await saver.putTaskOutcome(
    makeOutcome("t1", C1, pausedResult("task-i4"), {
      interrupts: [makeInterrupt("t1", "i4", { taskId: taskId("task-i4") })],
    }),
  );
}
