/**
 * Answers planned from the caller's reads (`AnswerBatch.readRuns`): a store may skip its own read
 * of the targeted rows, so each way those reads can be out of date must still end exactly as it
 * does without them — the same refusal, nothing written, or the rows' actual runs in the audit.
 */
import { expect } from "vitest";
import type { AnswerBatch, Checkpointer } from "../../checkpoint/types.ts";
import {
  checkpointId,
  interruptId,
  makeCheckpoint,
  makeCommit,
  makeInterrupt,
  makeOutcome,
  pausedResult,
  runId,
  taskId,
  threadId,
} from "../fixtures.ts";
import type { SpecModule } from "../suite.ts";
import { batch, wake } from "./answers.ts";
import { expectFencedOut, takenOver } from "./fencing.ts";
import { ROOT_STREAM } from "../../keys.ts";

const T = threadId("t1");
const C1 = checkpointId(1);
const I1 = interruptId("i1");

/** A thread at c1 whose task `task-1` is paused on interrupt `i1` of run `run-1`. */
async function pausedThread(saver: Checkpointer): Promise<void> {
  await saver.commitStep(makeCommit(makeCheckpoint("t1", C1), null));
  await saver.putTaskOutcome(
    makeOutcome("t1", C1, pausedResult("task-1"), {
      interrupts: [makeInterrupt("t1", "i1", { taskId: taskId("task-1") })],
    }),
  );
}

/** An answer to i1 that says it read i1 pending in run-1. */
function answer(over: Partial<AnswerBatch> = {}): AnswerBatch {
  return batch({
    answers: [{ id: I1, value: "yes" }],
    wake: [wake("1")],
    readRuns: { [I1]: runId("run-1") },
    ...over,
  });
}

/** Everything an answer may write, to compare before and after a refusal. */
async function written(saver: Checkpointer): Promise<unknown> {
  return {
    interrupt: await saver.getInterrupt(I1),
    tasks: await saver.getTaskResults(T, "", C1),
    audit: (await saver.listAudit({ threadId: T })).items.length,
    request: await saver.getRequestResult("req-2"),
  };
}

/** Specs of answer batches that carry the caller's reads. */
export const answerReadSpecs: SpecModule = {
  concern: "answer-reads",
  register({ spec }) {
    spec(
      "an answer with the caller's reads applies like one without",
      async (saver) => {
        await pausedThread(saver);
        expect(await saver.answerInterrupts(answer({ requestId: "req-1" }))).toEqual({ ok: true });
        expect((await saver.getInterrupt(I1))?.status).toBe("answered");
        expect(await saver.getTaskResults(T, "", C1)).toEqual([]);
        const audit = (await saver.listAudit({ threadId: T })).items;
        expect(audit.map((a) => [a.interruptId, a.runId])).toEqual([["i1", "run-1"]]);
      },
      ["auditChain", "interruptQueue"],
    );

    spec(
      "read pending, answered since: refused as not pending, nothing written",
      async (saver) => {
        await pausedThread(saver);
        await saver.answerInterrupts(answer({ readRuns: {} }));
        const before = await written(saver);
        const outcome = await saver.answerInterrupts(answer({ requestId: "req-2" }));
        expect(outcome).toEqual({ ok: false, reason: "not_pending", ids: [I1] });
        expect(await written(saver)).toEqual(before);
      },
      ["auditChain", "interruptQueue"],
    );

    spec(
      "a request applied since: refused as duplicate with its result",
      async (saver) => {
        await pausedThread(saver);
        await saver.answerInterrupts(answer({ requestId: "req-2", readRuns: {} }));
        await saver.putRequestResult("req-2", { status: "done" });
        const before = await written(saver);
        const outcome = await saver.answerInterrupts(answer({ requestId: "req-2" }));
        expect(outcome).toEqual({ ok: false, reason: "duplicate", result: { status: "done" } });
        expect(await written(saver)).toEqual(before);
      },
      ["auditChain", "interruptQueue"],
    );

    spec(
      "a head moved since: refused as head_moved, nothing written",
      async (saver) => {
        await pausedThread(saver);
        await saver.commitStep(makeCommit(makeCheckpoint("t1", checkpointId(2)), C1));
        const before = await written(saver);
        const outcome = await saver.answerInterrupts(
          answer({ requestId: "req-2", expectedHead: { stream: ROOT_STREAM, checkpointId: C1 } }),
        );
        expect(outcome).toEqual({
          ok: false,
          reason: "head_moved",
          headCheckpointId: checkpointId(2),
        });
        expect(await written(saver)).toEqual(before);
      },
      ["auditChain", "interruptQueue"],
    );

    spec(
      "a wrong run in the caller's reads: the audit names the row's run",
      async (saver) => {
        await pausedThread(saver);
        const outcome = await saver.answerInterrupts(
          answer({ readRuns: { [I1]: runId("other") } }),
        );
        expect(outcome).toEqual({ ok: true });
        const audit = (await saver.listAudit({ threadId: T })).items;
        expect(audit.map((a) => [a.interruptId, a.runId])).toEqual([["i1", "run-1"]]);
      },
      ["auditChain"],
    );

    spec(
      "concurrent answers that all read i1 pending: exactly one applies",
      async (saver) => {
        await pausedThread(saver);
        const actors = ["alice", "bob", "carol", "dave"];
        const outcomes = await Promise.all(
          actors.map((actor) =>
            saver.answerInterrupts(answer({ answers: [{ id: I1, value: actor }], actor })),
          ),
        );
        const winners = actors.filter((_, i) => outcomes[i]?.ok);
        expect(winners).toHaveLength(1);
        for (const [i, outcome] of outcomes.entries())
          if (!outcome.ok)
            expect(outcome, actors[i]).toEqual({ ok: false, reason: "not_pending", ids: [I1] });
        const row = await saver.getInterrupt(I1);
        expect(row?.answer).toBe(winners[0]);
        expect(row?.answeredBy).toBe(winners[0]);
        expect((await saver.listAudit({ threadId: T })).items).toHaveLength(1);
      },
      ["auditChain", "interruptQueue"],
    );

    spec(
      "a lease taken over since: fenced out, nothing written",
      async (saver, time) => {
        await pausedThread(saver);
        const { stale } = await takenOver(saver, time);
        const before = await written(saver);
        await expectFencedOut(saver.answerInterrupts(answer({ requestId: "req-2", fence: stale })));
        expect(await written(saver)).toEqual(before);
      },
      ["auditChain", "interruptQueue"],
    );
  },
};
