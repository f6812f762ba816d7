/**
 * One writer per thread: fenced writes refused once the lease changed hands, answered interrupts
 * never reset, finished runs never regressed, and runs found by status across threads.
 */
import { expect } from "vitest";
import type { Checkpointer, Fence } from "../../checkpoint/types.ts";
import { ErrorCodes, ReinError } from "../../errors.ts";
import {
  at,
  checkpointId,
  interruptId,
  makeAudit,
  makeCheckpoint,
  makeCommit,
  makeInterrupt,
  makeOutcome,
  makeRun,
  makeSteering,
  makeThread,
  pausedResult,
  runId,
  taskId,
  threadId,
} from "../fixtures.ts";
import type { SpecModule, SpecTime } from "../suite.ts";
import { ROOT_STREAM } from "../../keys.ts";

const T = threadId("t1");
const C1 = checkpointId(1);
const C2 = checkpointId(2);
const TTL = 250;

/**
 * Worker A takes the lease, lets it expire, worker B takes it over. Returns both fences: A's is
 * stale, B's is current.
 */
export async function takenOver(
  saver: Checkpointer,
  time: SpecTime,
): Promise<{ stale: Fence; current: Fence }> {
  const a = await saver.acquireLease(T, "worker-a", TTL);
  await time.advance(TTL + 150);
  const b = await saver.acquireLease(T, "worker-b", 60_000);
  if (a === null || b === null) throw new Error("lease not acquired");
  return { stale: { threadId: T, token: a }, current: { threadId: T, token: b } };
}

/** Asserts that `write` is refused with `fenced_out`. */
export async function expectFencedOut(write: Promise<unknown>): Promise<void> {
  const error: unknown = await write.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(ReinError.is(error) ? error.code : error).toBe(ErrorCodes.FENCED_OUT);
}

/** Specs of fencing and the no-regression rules. */
export const fencingSpecs: SpecModule = {
  concern: "fencing",
  register({ spec }) {
    spec("a stale holder's step commit is refused and writes nothing", async (saver, time) => {
      await saver.commitStep(makeCommit(makeCheckpoint("t1", C1), null));
      const { stale, current } = await takenOver(saver, time);
      await expectFencedOut(
        saver.commitStep(
          makeCommit(makeCheckpoint("t1", C2, { parentId: C1 }), C1, {
            fence: stale,
            runs: [makeRun("t1", "run-1", { status: "done" })],
          }),
        ),
      );
      expect((await saver.getCheckpoint(T, ROOT_STREAM))?.id).toBe(C1);
      expect(await saver.getRun(runId("run-1"))).toBeUndefined();
      await saver.commitStep(
        makeCommit(makeCheckpoint("t1", C2, { parentId: C1 }), C1, { fence: current }),
      );
      expect((await saver.getCheckpoint(T, ROOT_STREAM))?.id).toBe(C2);
    });

    spec(
      "a stale holder's task outcome, run and interrupt rows are refused",
      async (saver, time) => {
        await saver.commitStep(makeCommit(makeCheckpoint("t1", C1), null));
        const { stale } = await takenOver(saver, time);
        await expectFencedOut(
          saver.putTaskOutcome(
            makeOutcome("t1", C1, pausedResult("task-1"), {
              interrupts: [makeInterrupt("t1", "i1")],
              fence: stale,
            }),
          ),
        );
        expect(await saver.getTaskResults(T, "", C1)).toEqual([]);
        expect(await saver.getInterrupt(interruptId("i1"))).toBeUndefined();
        await expectFencedOut(saver.putRun(makeRun("t1", "run-1"), stale));
        expect(await saver.getRun(runId("run-1"))).toBeUndefined();
      },
      ["interruptQueue"],
    );

    spec(
      "a stale holder's answers, audit, steering, once and request rows are refused",
      async (saver, time) => {
        await saver.commitStep(makeCommit(makeCheckpoint("t1", C1), null));
        await saver.putTaskOutcome(
          makeOutcome("t1", C1, pausedResult("task-1"), {
            interrupts: [makeInterrupt("t1", "i1")],
          }),
        );
        const { stale } = await takenOver(saver, time);
        await expectFencedOut(
          saver.answerInterrupts({
            threadId: T,
            answers: [{ id: interruptId("i1"), value: true }],
            wake: [{ stream: ROOT_STREAM, checkpointId: C1, taskId: taskId("task-1") }],
            actor: "alice",
            action: "answer",
            requestId: "req-1",
            fence: stale,
          }),
        );
        expect((await saver.getInterrupt(interruptId("i1")))?.status).toBe("pending");
        expect(await saver.getRequestResult("req-1")).toBeUndefined();
        await expectFencedOut(saver.appendAudit(makeAudit("t1", "a1"), stale));
        await expectFencedOut(saver.appendSteering(makeSteering("t1", "s1"), stale));
        expect((await saver.listAudit({ threadId: T })).items).toEqual([]);
        expect(await saver.listSteering(T)).toEqual([]);
        await expectFencedOut(saver.putOnce(T, taskId("task-1"), "pay", "receipt", stale));
        expect(await saver.getOnce(T, taskId("task-1"), "pay")).toBeUndefined();
        await expectFencedOut(saver.putRequestResult("req-2", { ok: true }, stale));
        expect(await saver.getRequestResult("req-2")).toBeUndefined();
        await expectFencedOut(saver.putThread(makeThread("t1", { metadata: { x: 1 } }), stale));
        expect((await saver.getThread(T))?.metadata ?? {}).toEqual({});
      },
      ["auditChain", "interruptQueue", "steering", "threadCatalog"],
    );

    spec("a fence on a thread without a lease is refused", async (saver) => {
      await expectFencedOut(saver.putRun(makeRun("t1", "run-1"), { threadId: T, token: 1 }));
      expect(await saver.getRun(runId("run-1"))).toBeUndefined();
    });

    spec(
      "the current holder's fenced writes apply",
      async (saver) => {
        const token = await saver.acquireLease(T, "worker-a", 60_000);
        const fence = { threadId: T, token: token ?? -1 };
        await saver.putRun(makeRun("t1", "run-1"), fence);
        await saver.appendAudit(makeAudit("t1", "a1"), fence);
        expect((await saver.getRun(runId("run-1")))?.status).toBe("running");
        expect((await saver.listAudit({ threadId: T })).items).toHaveLength(1);
      },
      ["auditChain"],
    );

    spec(
      "a re-raised interrupt never resets an answered one",
      async (saver) => {
        await saver.commitStep(makeCommit(makeCheckpoint("t1", C1), null));
        await saver.putTaskOutcome(
          makeOutcome("t1", C1, pausedResult("task-1"), {
            interrupts: [makeInterrupt("t1", "i1")],
          }),
        );
        const answered = await saver.answerInterrupts({
          threadId: T,
          answers: [{ id: interruptId("i1"), value: { approved: true } }],
          wake: [{ stream: ROOT_STREAM, checkpointId: C1, taskId: taskId("task-1") }],
          actor: "alice",
          action: "answer",
        });
        expect(answered.ok).toBe(true);
        // A late writer stores the same interrupt as pending again, through both write paths.
        await saver.putTaskOutcome(
          makeOutcome("t1", C1, pausedResult("task-1"), {
            interrupts: [makeInterrupt("t1", "i1")],
          }),
        );
        await saver.commitStep(
          makeCommit(makeCheckpoint("t1", C2, { parentId: C1 }), C1, {
            interrupts: [makeInterrupt("t1", "i1")],
          }),
        );
        const row = await saver.getInterrupt(interruptId("i1"));
        expect(row?.status).toBe("answered");
        expect(row?.answer).toEqual({ approved: true });
        expect((await saver.listInterrupts({ status: "pending" })).items).toEqual([]);
      },
      ["interruptQueue"],
    );

    spec("a done run never goes back to running or interrupted", async (saver) => {
      await saver.putRun(makeRun("t1", "run-1", { status: "done" }));
      await saver.putRun(makeRun("t1", "run-1", { status: "interrupted" }));
      await saver.commitStep(
        makeCommit(makeCheckpoint("t1", C1), null, {
          runs: [makeRun("t1", "run-1", { status: "running" })],
        }),
      );
      expect((await saver.getRun(runId("run-1")))?.status).toBe("done");
      await saver.putRun(makeRun("t1", "run-2", { status: "cancelled" }));
      await saver.putRun(makeRun("t1", "run-2", { status: "running" }));
      expect((await saver.getRun(runId("run-2")))?.status).toBe("cancelled");
    });

    spec("an answer batch resumes its interrupted runs in the same transaction", async (saver) => {
      await saver.commitStep(makeCommit(makeCheckpoint("t1", C1), null));
      await saver.putRun(makeRun("t1", "run-1", { status: "interrupted" }));
      await saver.putRun(makeRun("t1", "run-done", { status: "done" }));
      await saver.putTaskOutcome(
        makeOutcome("t1", C1, pausedResult("task-1"), {
          interrupts: [makeInterrupt("t1", "i1")],
        }),
      );
      const refused = await saver.answerInterrupts({
        threadId: T,
        answers: [{ id: interruptId("missing"), value: 1 }],
        wake: [],
        actor: "alice",
        action: "answer",
        resumeRuns: [runId("run-1")],
      });
      expect(refused.ok).toBe(false);
      expect((await saver.getRun(runId("run-1")))?.status).toBe("interrupted");
      const applied = await saver.answerInterrupts({
        threadId: T,
        answers: [{ id: interruptId("i1"), value: 1 }],
        wake: [],
        actor: "alice",
        action: "answer",
        resumeRuns: [runId("run-1"), runId("run-done"), runId("run-unknown")],
      });
      expect(applied.ok).toBe(true);
      const resumed = await saver.getRun(runId("run-1"));
      expect(resumed).toEqual({
        ...makeRun("t1", "run-1"),
        status: "running",
        updatedAt: resumed?.updatedAt,
      });
      expect(resumed?.updatedAt).not.toBe(makeRun("t1", "run-1").updatedAt);
      // Only an interrupted run moves: a finished one keeps its status, an unknown one is not made.
      expect((await saver.getRun(runId("run-done")))?.status).toBe("done");
      expect(await saver.getRun(runId("run-unknown"))).toBeUndefined();
    });

    spec(
      "listRunsByStatus pages runs of one status across threads, oldest update first",
      async (saver) => {
        await saver.putRun(makeRun("t1", "r1", { updatedAt: at(3) }));
        await saver.putRun(makeRun("t2", "r2", { updatedAt: at(1) }));
        await saver.putRun(makeRun("t3", "r3", { updatedAt: at(2), status: "done" }));
        await saver.putRun(
          makeRun("t2", "r4", { updatedAt: at(0), parentRunId: runId("r2"), namespace: ["sub"] }),
        );
        const all = await saver.listRunsByStatus({ status: "running" });
        expect(all.items.map((r) => r.runId)).toEqual(["r4", "r2", "r1"]);
        const roots = await saver.listRunsByStatus({ status: "running", rootOnly: true, limit: 1 });
        expect(roots.items.map((r) => r.runId)).toEqual(["r2"]);
        const next = await saver.listRunsByStatus({
          status: "running",
          rootOnly: true,
          cursor: roots.nextCursor,
        });
        expect(next.items.map((r) => r.runId)).toEqual(["r1"]);
        expect(next.nextCursor).toBeNull();
        const done = await saver.listRunsByStatus({ status: "done" });
        expect(done.items.map((r) => r.runId)).toEqual(["r3"]);
      },
      ["runRecovery"],
    );
  },
};
