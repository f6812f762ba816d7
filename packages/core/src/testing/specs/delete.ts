/** deleteThread: everything of the thread goes, nothing of any other thread does. */
import { expect } from "vitest";
import type { Checkpointer } from "../../checkpoint/types.ts";
import {
  checkpointId,
  fullBlob,
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
  writesResult,
} from "../fixtures.ts";
import type { SpecModule } from "../suite.ts";
import { ROOT_STREAM } from "../../keys.ts";

const C1 = checkpointId(1);

/** Stores one of everything for thread `t`, on the root stream and a child stream. */
async function populate(saver: Checkpointer, t: string): Promise<void> {
  await saver.putThread(makeThread(t, { tenant: "acme" }));
  for (const stream of [ROOT_STREAM, "child"]) {
    await saver.commitStep(
      makeCommit(makeCheckpoint(t, C1, { stream, versions: { a: "v1" } }), null, {
        blobs: [fullBlob("a", "v1", `${t}-${stream}`)],
        runs: [makeRun(t, `${t}-run-${stream}`, { stream })],
      }),
    );
  }
  await saver.putTaskOutcome(makeOutcome(t, C1, writesResult(`${t}-task-w`)));
  await saver.putTaskOutcome(
    makeOutcome(t, C1, pausedResult(`${t}-task-p`), {
      interrupts: [makeInterrupt(t, `${t}-i1`), makeInterrupt(t, `${t}-i2`)],
    }),
  );
  await saver.answerInterrupts({
    threadId: threadId(t),
    answers: [{ id: interruptId(`${t}-i2`), value: 1 }],
    wake: [],
    actor: "alice",
    action: "answer",
    requestId: `${t}-req`,
  });
  await saver.appendSteering(makeSteering(t, `${t}-s1`));
  await saver.appendAudit(makeAudit(t, `${t}-a1`));
  await saver.putOnce(threadId(t), taskId(`${t}-task-w`), "k", 1);
  expect(await saver.acquireLease(threadId(t), `${t}-worker`, 60_000)).toBeTypeOf("number");
}

/** What is left of thread `t`, as a comparable summary. */
async function inventory(saver: Checkpointer, t: string): Promise<Record<string, unknown>> {
  const id = threadId(t);
  return {
    thread: (await saver.getThread(id))?.threadId,
    threadListed: (await saver.listThreads({ tenant: "acme" })).items.some((x) => x.threadId === t),
    head: (await saver.getCheckpoint(id, ROOT_STREAM))?.id,
    childHead: (await saver.getCheckpoint(id, "child"))?.id,
    history: (await saver.listCheckpoints(id, ROOT_STREAM)).length,
    tasks: (await saver.getTaskResults(id, "", C1)).length,
    interrupts: (await saver.getThreadInterrupts(id)).length,
    listed: (await saver.listInterrupts({ threadId: id })).items.length,
    pending: (await saver.getPendingInterrupts(id, 10)).total,
    pendingAtHead: (await saver.getThreadHead(id, ROOT_STREAM)).pendingInterrupts,
    byId: (await saver.getInterrupt(interruptId(`${t}-i1`)))?.id,
    runs: (await saver.listRuns(id)).length,
    run: (await saver.getRun(runId(`${t}-run-`)))?.runId,
    steering: (await saver.listSteering(id)).length,
    audit: (await saver.listAudit({ threadId: id })).items.length,
    once: await saver.getOnce(id, taskId(`${t}-task-w`), "k"),
    lease: (await saver.getLease(id))?.owner,
  };
}

/** Specs of deleteThread. */
export const deleteSpecs: SpecModule = {
  concern: "delete",
  register({ spec }) {
    spec(
      "deleteThread removes everything of that thread and nothing of another",
      async (saver) => {
        await populate(saver, "doomed");
        await populate(saver, "kept");
        const keptBefore = await inventory(saver, "kept");
        expect(keptBefore).toMatchObject({
          thread: "kept",
          head: C1,
          interrupts: 2,
          pending: 1,
          pendingAtHead: 1,
          audit: 2,
        });

        await saver.deleteThread(threadId("doomed"));

        expect(await inventory(saver, "doomed")).toEqual({
          thread: undefined,
          threadListed: false,
          head: undefined,
          childHead: undefined,
          history: 0,
          tasks: 0,
          interrupts: 0,
          listed: 0,
          pending: 0,
          pendingAtHead: 0,
          byId: undefined,
          runs: 0,
          run: undefined,
          steering: 0,
          audit: 0,
          once: undefined,
          lease: undefined,
        });
        expect(await inventory(saver, "kept")).toEqual(keptBefore);
        expect(await saver.getChannelValues(threadId("kept"), "child", { a: "v1" })).toEqual({
          a: "kept-child",
        });
      },
      [
        "auditChain",
        "interruptQueue",
        "leaseStatus",
        "narrowReads",
        "steering",
        "threadCatalog",
        "threadHistory",
      ],
    );

    spec(
      "a deleted thread starts over: an empty stream, blobs and request ids forgotten",
      async (saver) => {
        await populate(saver, "t1");
        await saver.deleteThread(threadId("t1"));
        await expect(
          saver.getChannelValues(threadId("t1"), ROOT_STREAM, { a: "v1" }),
        ).rejects.toThrow();
        await saver.commitStep(
          makeCommit(makeCheckpoint("t1", C1, { versions: { a: "v1" } }), null, {
            blobs: [fullBlob("a", "v1", "fresh")],
          }),
        );
        expect(await saver.getChannelValues(threadId("t1"), ROOT_STREAM, { a: "v1" })).toEqual({
          a: "fresh",
        });
        const outcome = await saver.answerInterrupts({
          threadId: threadId("t1"),
          answers: [],
          wake: [],
          actor: "alice",
          action: "answer",
          requestId: "t1-req",
        });
        expect(outcome).toEqual({ ok: true });
      },
      ["steering", "threadCatalog"],
    );

    spec(
      "deleting an unknown thread is a no-op",
      async (saver) => {
        await populate(saver, "kept");
        const before = await inventory(saver, "kept");
        await saver.deleteThread(threadId("never-existed"));
        expect(await inventory(saver, "kept")).toEqual(before);
      },
      [
        "auditChain",
        "interruptQueue",
        "leaseStatus",
        "narrowReads",
        "steering",
        "threadCatalog",
        "threadHistory",
      ],
    );
  },
};
