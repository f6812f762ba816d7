/**
 * Every write of {@link STORE_WRITE_METHODS}, made through the fencing view of a holder whose
 * lease changed hands, is refused and writes nothing; the same write through the current holder's
 * view applies. The cases are keyed by the list, so a write added to it needs a case here.
 */
import { expect } from "vitest";
import {
  fencedStore,
  STORE_WRITE_METHODS,
  type StoreWriteMethod,
} from "../../checkpoint/fenced.ts";
import type { AnswerBatch, Checkpointer } from "../../checkpoint/types.ts";
import {
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
import type { SpecModule } from "../suite.ts";
import { expectFencedOut, takenOver } from "./fencing.ts";
import { ROOT_STREAM } from "../../keys.ts";

const T = threadId("t1");
const C1 = checkpointId(1);
const TASK = taskId("task-1");

/** One write: made through a fencing view, and what it would change, read from the store. */
interface WriteCase {
  write: (view: Checkpointer) => Promise<unknown>;
  read: (saver: Checkpointer) => Promise<unknown>;
}

/** An answer to the pending interrupt `id` of the setup's paused task. */
function answer(id: string, requestId: string): AnswerBatch {
  return {
    threadId: T,
    answers: [{ id: interruptId(id), value: true }],
    wake: [{ stream: ROOT_STREAM, checkpointId: C1, taskId: TASK }],
    actor: "alice",
    action: "answer",
    requestId,
  };
}

const CASES: Record<StoreWriteMethod, WriteCase> = {
  putThread: {
    write: (view) => view.putThread(makeThread("t1", { metadata: { x: 1 }, graph: "g" })),
    read: (saver) => saver.getThread(T),
  },
  commitStep: {
    write: (view) =>
      view.commitStep(
        makeCommit(makeCheckpoint("t1", checkpointId(2), { parentId: C1 }), C1, {
          runs: [makeRun("t1", "run-c")],
        }),
      ),
    read: async (saver) => [
      (await saver.getCheckpoint(T, ROOT_STREAM))?.id,
      await saver.getRun(runId("run-c")),
    ],
  },
  putTaskOutcome: {
    write: (view) =>
      view.putTaskOutcome(
        makeOutcome("t1", C1, pausedResult("task-2"), {
          interrupts: [makeInterrupt("t1", "i-new", { taskId: taskId("task-2") })],
        }),
      ),
    read: async (saver) => [
      await saver.getTaskResults(T, "", C1),
      await saver.getInterrupt(interruptId("i-new")),
    ],
  },
  answerInterrupts: {
    write: (view) => view.answerInterrupts(answer("i1", "req-a")),
    read: async (saver) => [
      (await saver.getInterrupt(interruptId("i1")))?.status,
      await saver.getRequestResult("req-a"),
    ],
  },
  answerBatches: {
    write: (view) => view.answerBatches?.([answer("i2", "req-b")]) ?? Promise.resolve(),
    read: async (saver) => (await saver.getInterrupt(interruptId("i2")))?.status,
  },
  putRequestResult: {
    write: (view) => view.putRequestResult("req-r", { ok: true }),
    read: (saver) => saver.getRequestResult("req-r"),
  },
  putOnce: {
    write: (view) => view.putOnce(T, TASK, "pay", "receipt"),
    read: (saver) => saver.getOnce(T, TASK, "pay"),
  },
  putRun: {
    write: (view) => view.putRun(makeRun("t1", "run-p")),
    read: (saver) => saver.getRun(runId("run-p")),
  },
  appendSteering: {
    write: (view) => view.appendSteering(makeSteering("t1", "s1")),
    read: (saver) => saver.listSteering(T),
  },
  appendAudit: {
    write: (view) => view.appendAudit(makeAudit("t1", "a1")),
    read: async (saver) => (await saver.listAudit({ threadId: T })).items,
  },
};

/** The conformance spec of the fencing view's write list. */
export const fencedWriteSpecs: SpecModule = {
  concern: "fenced writes",
  register({ spec }) {
    spec(
      "each write of the fencing view's list refuses a stale fence and writes nothing",
      async (saver, time) => {
        await saver.commitStep(makeCommit(makeCheckpoint("t1", C1), null));
        await saver.putTaskOutcome(
          makeOutcome("t1", C1, pausedResult("task-1"), {
            interrupts: [
              makeInterrupt("t1", "i1", { order: 0 }),
              makeInterrupt("t1", "i2", { order: 1 }),
            ],
          }),
        );
        const { stale, current } = await takenOver(saver, time);
        const methods = STORE_WRITE_METHODS.filter(
          (m) => m !== "answerBatches" || saver.answerBatches !== undefined,
        );
        const before = new Map<string, unknown>();
        for (const method of methods) {
          const { write, read } = CASES[method];
          before.set(method, await read(saver));
          await expectFencedOut(write(fencedStore(saver, stale)));
          expect(await read(saver), method).toEqual(before.get(method));
        }
        // The same writes by the current holder apply: each case reads what its write changes.
        for (const method of methods) {
          const { write, read } = CASES[method];
          await write(fencedStore(saver, current));
          expect(await read(saver), method).not.toEqual(before.get(method));
        }
      },
      ["auditChain", "bulkAnswers", "interruptQueue", "steering", "threadCatalog"],
    );
  },
};
