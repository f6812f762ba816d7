/**
 * Reads a networked store makes in the round trip of a write (`acquireLeaseAndRead`,
 * `AnswerBatch.thenRead`): each must equal what the store's own read method returns at that
 * moment — after the lease is taken, after the answer applied — and none is made when the write
 * is refused. A store without these capabilities (it reads in-process) is checked to ignore
 * `thenRead` and answer as before.
 */
import { expect } from "vitest";
import { hasCapability } from "../../checkpoint/capabilities.ts";
import type { Checkpointer } from "../../checkpoint/types.ts";
import {
  checkpointId,
  fullBlob,
  interruptId,
  makeCheckpoint,
  makeCommit,
  makeInterrupt,
  makeOutcome,
  makeRun,
  pausedResult,
  runId,
  taskId,
  threadId,
} from "../fixtures.ts";
import type { SpecModule } from "../suite.ts";
import { batch, wake } from "./answers.ts";
import { ROOT_STREAM } from "../../keys.ts";

const T = threadId("t1");
const C1 = checkpointId(1);
const I1 = interruptId("i1");
const RUN = runId("run-1");

/** A thread at c1 (one channel value) whose task `task-1` of run-1 is paused on i1. */
async function pausedThread(saver: Checkpointer): Promise<void> {
  const cp = makeCheckpoint("t1", C1, {
    versions: { n: "v1" },
    next: [{ id: taskId("task-1"), node: "ask", trigger: "edge" }],
  });
  await saver.commitStep(
    makeCommit(cp, null, {
      blobs: [fullBlob("n", "v1", 41)],
      runs: [makeRun("t1", "run-1", { status: "interrupted" })],
    }),
  );
  await saver.putTaskOutcome(
    makeOutcome("t1", C1, pausedResult("task-1"), {
      interrupts: [makeInterrupt("t1", "i1", { taskId: taskId("task-1") })],
    }),
  );
}

/** The answer to i1, asking for the continuation's reads at the head. */
async function answerWithReads(saver: Checkpointer, over: Parameters<typeof batch>[0] = {}) {
  const { checkpoint } = await saver.getThreadHead(T, ROOT_STREAM);
  if (!checkpoint) throw new Error("no head");
  return saver.answerInterrupts(
    batch({
      answers: [{ id: I1, value: "yes" }],
      wake: [wake("1")],
      resumeRuns: [RUN],
      readRuns: { [I1]: RUN },
      thenRead: { head: checkpoint, taskIds: [taskId("task-1")] },
      ...over,
    }),
  );
}

/** Specs of the reads that come back with the lease or the answer. */
export const callReadSpecs: SpecModule = {
  concern: "call-reads",
  register({ spec }) {
    spec(
      "acquireLeaseAndRead takes the lease and reads what the store's reads return",
      async (saver) => {
        if (!hasCapability(saver, "leaseReads")) return;
        await pausedThread(saver);
        const taken = await saver.acquireLeaseAndRead(T, "worker-a", 60_000, {
          requestId: "req-1",
          pendingLimit: 1,
          interruptIds: [I1, interruptId("nope")],
          runId: RUN,
        });
        expect(taken?.token).toBeTypeOf("number");
        expect((await saver.getLease(T))?.token).toBe(taken?.token);
        const reads = taken?.reads;
        expect(reads?.head).toEqual(await saver.getThreadHead(T, ROOT_STREAM));
        expect(reads?.request).toBeUndefined();
        expect("request" in (reads ?? {})).toBe(true);
        const pending = await saver.getPendingInterrupts(T, 1);
        expect({ items: reads?.pending?.items, total: reads?.pending?.total }).toEqual({
          items: pending.items,
          total: pending.total,
        });
        expect(reads?.interrupts).toEqual(await saver.getInterrupts([I1]));
        expect(reads?.run).toEqual(await saver.getRun(RUN));
        const ofRun = await saver.listInterrupts({ threadId: T, runId: RUN, status: "pending" });
        expect(reads?.runPending).toEqual(ofRun.items);
        // A request applied since is read with the next lease, its outcome stored or not yet.
        await saver.answerInterrupts(
          batch({ answers: [{ id: I1, value: 1 }], requestId: "req-1" }),
        );
        const again = await saver.acquireLeaseAndRead(T, "worker-a", 60_000, {
          requestId: "req-1",
        });
        expect(again?.reads.request).toEqual({ result: undefined });
        expect(again?.reads.head.pendingInterrupts).toBe(0);
      },
      ["leaseReads", "leaseStatus", "interruptQueue", "narrowReads"],
    );

    spec(
      "acquireLeaseAndRead while another owner holds the lease: null, the lease stays theirs",
      async (saver) => {
        if (!hasCapability(saver, "leaseReads")) return;
        await pausedThread(saver);
        const held = await saver.acquireLease(T, "worker-a", 60_000);
        expect(
          await saver.acquireLeaseAndRead(T, "worker-b", 60_000, { pendingLimit: 1 }),
        ).toBeNull();
        expect(await saver.getLease(T)).toMatchObject({ owner: "worker-a", token: held });
      },
      ["leaseReads", "leaseStatus"],
    );

    spec(
      "an answer asked for the continuation's reads returns them as read after it",
      async (saver) => {
        await pausedThread(saver);
        const outcome = await answerWithReads(saver);
        expect(outcome.ok).toBe(true);
        if (!outcome.ok || outcome.reads === undefined) return;
        const { reads } = outcome;
        const head = await saver.getThreadHead(T, ROOT_STREAM);
        expect(reads.head).toEqual(head);
        // The run the answer resumed, and no pending interrupt left: read after the answer.
        expect(reads.head.run?.status).toBe("running");
        expect(reads.head.pendingInterrupts).toBe(0);
        expect(reads.values).toEqual(await saver.getChannelValues(T, ROOT_STREAM, { n: "v1" }));
        expect(reads.kinds).toEqual(await saver.getTaskResultKinds(T, "", C1));
        expect(reads.kinds).toEqual([]);
        expect(reads.taskInterrupts).toEqual(await saver.getTaskInterrupts(T, [taskId("task-1")]));
        expect(reads.taskInterrupts?.map((i) => [i.id, i.status, i.answer])).toEqual([
          ["i1", "answered", "yes"],
        ]);
      },
      ["narrowReads"],
    );

    spec(
      "a pause asked for the pending page returns it as read after the pause",
      async (saver) => {
        await saver.commitStep(makeCommit(makeCheckpoint("t1", C1), null));
        const rows = [interruptId("i1"), interruptId("i2")].map((id) =>
          makeInterrupt("t1", id, { taskId: taskId("task-1") }),
        );
        const page = await saver.putTaskOutcome(
          makeOutcome("t1", C1, pausedResult("task-1"), { interrupts: rows, thenReadPending: 1 }),
        );
        if (!page) return;
        const read = await saver.getPendingInterrupts(T, 1);
        expect({ items: page.items, total: page.total }).toEqual({
          items: read.items,
          total: read.total,
        });
        expect(page.total).toBe(2);
      },
      ["narrowReads"],
    );

    spec("an answer refused is refused as before, with no reads", async (saver) => {
      await pausedThread(saver);
      await saver.answerInterrupts(batch({ answers: [{ id: I1, value: "first" }] }));
      const outcome = await answerWithReads(saver, { requestId: "req-9" });
      expect(outcome).toEqual({ ok: false, reason: "not_pending", ids: [I1] });
      expect(await saver.getRequestResult("req-9")).toBeUndefined();
    });
  },
};
