/** Checkpoints: atomic step commits with compare-and-set on the stream head, reads and history. */
import { expect } from "vitest";
import { CheckpointConflictError } from "../../errors.ts";
import type { Checkpointer } from "../../checkpoint/types.ts";
import type { CheckpointId } from "../../ids.ts";
import {
  at,
  checkpointId,
  fullBlob,
  makeAudit,
  makeCheckpoint,
  makeCommit,
  makeInterrupt,
  makeOutcome,
  makeRun,
  makeThread,
  pausedResult,
  runId,
  taskId,
  threadId,
  writesResult,
} from "../fixtures.ts";
import type { SpecModule } from "../suite.ts";
import { ROOT_STREAM } from "../../keys.ts";

const T = threadId("t1");

/** Commits a linear chain of `count` checkpoints c(1)..c(count) on the root stream. */
async function commitChain(
  saver: Checkpointer,
  count: number,
  stream: string = ROOT_STREAM,
): Promise<void> {
  let head: CheckpointId | null = null;
  for (let n = 1; n <= count; n += 1) {
    const id = checkpointId(n);
    await saver.commitStep(
      makeCommit(makeCheckpoint("t1", id, { stream, parentId: head, step: n - 1 }), head),
    );
    head = id;
  }
}

/** Specs of commitStep, getCheckpoint and listCheckpoints. */
export const checkpointSpecs: SpecModule = {
  concern: "checkpoints",
  register({ spec }) {
    spec("commitStep stores the checkpoint and makes it the head", async (saver) => {
      const checkpoint = makeCheckpoint("t1", checkpointId(1), {
        step: -1,
        source: "input",
        versions: { messages: "v1" },
        next: [{ id: taskId("task-a"), node: "a", trigger: "edge" }],
        metadata: { writes: { __input__: { x: 1 } } },
      });
      await saver.commitStep(makeCommit(checkpoint, null));
      expect(await saver.getCheckpoint(T, ROOT_STREAM)).toEqual(checkpoint);
      expect(await saver.getCheckpoint(T, ROOT_STREAM, checkpointId(1))).toEqual(checkpoint);
    });

    spec("getCheckpoint of an empty stream or an unknown id is undefined", async (saver) => {
      expect(await saver.getCheckpoint(T, ROOT_STREAM)).toBeUndefined();
      await commitChain(saver, 1);
      expect(await saver.getCheckpoint(T, ROOT_STREAM, checkpointId(99))).toBeUndefined();
      expect(await saver.getCheckpoint(threadId("other"), ROOT_STREAM)).toBeUndefined();
    });

    spec(
      "the head follows each commit and older checkpoints stay readable by id",
      async (saver) => {
        await commitChain(saver, 3);
        expect((await saver.getCheckpoint(T, ROOT_STREAM))?.id).toBe(checkpointId(3));
        const first = await saver.getCheckpoint(T, ROOT_STREAM, checkpointId(1));
        expect(first?.id).toBe(checkpointId(1));
        expect(first?.parentId).toBeNull();
        expect((await saver.getCheckpoint(T, ROOT_STREAM, checkpointId(2)))?.parentId).toBe(
          checkpointId(1),
        );
      },
    );

    spec(
      "a commit whose expectedHeadId is not the head throws CheckpointConflictError and writes nothing",
      async (saver) => {
        await commitChain(saver, 2);
        const stale = makeCheckpoint("t1", checkpointId(3), {
          parentId: checkpointId(1),
          versions: { x: "vx" },
        });
        const commit = makeCommit(stale, checkpointId(1), {
          blobs: [fullBlob("x", "vx", 42)],
          interrupts: [makeInterrupt("t1", "i-stale")],
          runs: [makeRun("t1", "run-stale")],
        });
        await expect(saver.commitStep(commit)).rejects.toBeInstanceOf(CheckpointConflictError);
        expect((await saver.getCheckpoint(T, ROOT_STREAM))?.id).toBe(checkpointId(2));
        expect(await saver.getCheckpoint(T, ROOT_STREAM, checkpointId(3))).toBeUndefined();
        expect(await saver.getInterrupt(makeInterrupt("t1", "i-stale").id)).toBeUndefined();
        expect(await saver.getRun(runId("run-stale"))).toBeUndefined();
        await expect(saver.getChannelValues(T, ROOT_STREAM, { x: "vx" })).rejects.toThrow();
      },
      ["interruptQueue"],
    );

    spec("the conflict error carries the expected and the actual head", async (saver) => {
      await commitChain(saver, 2);
      const error: unknown = await saver
        .commitStep(makeCommit(makeCheckpoint("t1", checkpointId(3)), checkpointId(1)))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CheckpointConflictError);
      expect((error as CheckpointConflictError).code).toBe("checkpoint_conflict");
      expect((error as CheckpointConflictError).details).toMatchObject({
        expectedHeadId: checkpointId(1),
        headCheckpointId: checkpointId(2),
      });
    });

    spec(
      "the first commit of a stream must expect a null head, later ones must not",
      async (saver) => {
        await expect(
          saver.commitStep(makeCommit(makeCheckpoint("t1", checkpointId(1)), checkpointId(7))),
        ).rejects.toBeInstanceOf(CheckpointConflictError);
        expect(await saver.getCheckpoint(T, ROOT_STREAM)).toBeUndefined();
        await commitChain(saver, 1);
        await expect(
          saver.commitStep(makeCommit(makeCheckpoint("t1", checkpointId(2)), null)),
        ).rejects.toBeInstanceOf(CheckpointConflictError);
        expect((await saver.getCheckpoint(T, ROOT_STREAM))?.id).toBe(checkpointId(1));
      },
    );

    spec(
      "two concurrent commits on the same head: exactly one wins",
      async (saver) => {
        await commitChain(saver, 1);
        const contenders = [2, 3, 4].map((n) =>
          saver.commitStep(
            makeCommit(
              makeCheckpoint("t1", checkpointId(n), { parentId: checkpointId(1) }),
              checkpointId(1),
              {
                blobs: [fullBlob("x", `v${n}`, n)],
              },
            ),
          ),
        );
        const results = await Promise.allSettled(contenders);
        const won = results.flatMap((r, i) => (r.status === "fulfilled" ? [i + 2] : []));
        expect(won).toHaveLength(1);
        for (const r of results) {
          if (r.status === "rejected") expect(r.reason).toBeInstanceOf(CheckpointConflictError);
        }
        const winner = won[0] as number;
        expect((await saver.getCheckpoint(T, ROOT_STREAM))?.id).toBe(checkpointId(winner));
        expect(await saver.listCheckpoints(T, ROOT_STREAM)).toHaveLength(2);
      },
      ["threadHistory"],
    );

    spec(
      "streams of one thread have separate heads",
      async (saver) => {
        await commitChain(saver, 2, "");
        await saver.commitStep(
          makeCommit(makeCheckpoint("t1", checkpointId(10), { stream: "child-run" }), null),
        );
        expect((await saver.getCheckpoint(T, ROOT_STREAM))?.id).toBe(checkpointId(2));
        expect((await saver.getCheckpoint(T, "child-run"))?.id).toBe(checkpointId(10));
        expect((await saver.listCheckpoints(T, "child-run")).map((c) => c.id)).toEqual([
          checkpointId(10),
        ]);
        await expect(
          saver.commitStep(
            makeCommit(
              makeCheckpoint("t1", checkpointId(11), { stream: "child-run" }),
              checkpointId(2),
            ),
          ),
        ).rejects.toBeInstanceOf(CheckpointConflictError);
      },
      ["threadHistory"],
    );

    spec(
      "listCheckpoints is newest first, honours limit and before",
      async (saver) => {
        await commitChain(saver, 5);
        const ids = async (options?: { limit?: number; before?: CheckpointId }) =>
          (await saver.listCheckpoints(T, ROOT_STREAM, options)).map((c) => c.step);
        expect(await ids()).toEqual([4, 3, 2, 1, 0]);
        expect(await ids({ limit: 2 })).toEqual([4, 3]);
        expect(await ids({ before: checkpointId(4) })).toEqual([2, 1, 0]);
        expect(await ids({ before: checkpointId(4), limit: 2 })).toEqual([2, 1]);
        expect(await ids({ before: checkpointId(1) })).toEqual([]);
        expect(await saver.listCheckpoints(threadId("other"), ROOT_STREAM)).toEqual([]);
      },
      ["threadHistory"],
    );

    spec(
      "a fork commit (parent older than the head) becomes the head",
      async (saver) => {
        await commitChain(saver, 3);
        const fork = makeCheckpoint("t1", checkpointId(4), {
          parentId: checkpointId(1),
          source: "fork",
        });
        await saver.commitStep(makeCommit(fork, checkpointId(3)));
        expect(await saver.getCheckpoint(T, ROOT_STREAM)).toEqual(fork);
        expect((await saver.listCheckpoints(T, ROOT_STREAM)).map((c) => c.id)).toEqual(
          [4, 3, 2, 1].map(checkpointId),
        );
      },
      ["threadHistory"],
    );

    spec(
      "a commit stores its interrupts and runs with the checkpoint",
      async (saver) => {
        const interrupt = makeInterrupt("t1", "i-after", {
          kind: "after",
          checkpointId: checkpointId(1),
        });
        const run = makeRun("t1", "run-1", { status: "interrupted", updatedAt: at(5) });
        await saver.commitStep(
          makeCommit(makeCheckpoint("t1", checkpointId(1)), null, {
            interrupts: [interrupt],
            runs: [run],
          }),
        );
        expect(await saver.getInterrupt(interrupt.id)).toEqual(interrupt);
        expect(await saver.getRun(runId("run-1"))).toEqual(run);
      },
      ["interruptQueue"],
    );

    spec(
      "a commit replaces interrupt and run rows that already exist",
      async (saver) => {
        await saver.putRun(makeRun("t1", "run-1", { status: "running" }));
        await saver.commitStep(
          makeCommit(makeCheckpoint("t1", checkpointId(1)), null, {
            interrupts: [makeInterrupt("t1", "i1", { payload: { v: 1 } })],
          }),
        );
        await saver.commitStep(
          makeCommit(makeCheckpoint("t1", checkpointId(2)), checkpointId(1), {
            interrupts: [makeInterrupt("t1", "i1", { payload: { v: 2 } })],
            runs: [makeRun("t1", "run-1", { status: "done" })],
          }),
        );
        expect((await saver.getInterrupt(makeInterrupt("t1", "i1").id))?.payload).toEqual({ v: 2 });
        expect((await saver.getRun(runId("run-1")))?.status).toBe("done");
        expect(await saver.getThreadInterrupts(T)).toHaveLength(1);
      },
      ["interruptQueue"],
    );

    spec(
      "a commit records task results, the thread row and audit lines with the checkpoint",
      async (saver) => {
        const c1 = checkpointId(1);
        await saver.commitStep(makeCommit(makeCheckpoint("t1", c1), null));
        await saver.putTaskOutcome(makeOutcome("t1", c1, writesResult("task-w", [["x", 1]])));
        await saver.commitStep(
          makeCommit(makeCheckpoint("t1", checkpointId(2)), c1, {
            taskResults: [
              // A task that has a writes result keeps it.
              { checkpointId: c1, result: writesResult("task-w", [["x", 2]]) },
              { checkpointId: c1, result: pausedResult("task-p") },
              { checkpointId: c1, result: writesResult("task-p", [["y", 3]]) },
            ],
            thread: makeThread("t1", { tenant: "acme", metadata: { topic: "refund" } }),
            audit: [makeAudit("t1", "a1"), makeAudit("t1", "a2")],
          }),
        );
        const results = await saver.getTaskResults(T, "", c1);
        expect(results).toEqual([
          writesResult("task-w", [["x", 1]]),
          writesResult("task-p", [["y", 3]]),
        ]);
        expect(await saver.getThread(T)).toMatchObject({
          tenant: "acme",
          metadata: { topic: "refund" },
        });
        const audit = (await saver.listAudit({ threadId: T })).items.map((a) => a.id);
        expect(audit).toEqual(["a1", "a2"]);
      },
      ["auditChain", "threadCatalog"],
    );

    spec(
      "a refused commit writes none of its task results, thread row or audit",
      async (saver) => {
        const c1 = checkpointId(1);
        await saver.commitStep(makeCommit(makeCheckpoint("t1", c1), null));
        const stale = makeCommit(makeCheckpoint("t1", checkpointId(3)), checkpointId(2), {
          taskResults: [{ checkpointId: c1, result: pausedResult("task-p") }],
          thread: makeThread("t1"),
          audit: [makeAudit("t1", "a1")],
        });
        await expect(saver.commitStep(stale)).rejects.toBeInstanceOf(CheckpointConflictError);
        expect(await saver.getTaskResults(T, "", c1)).toEqual([]);
        expect(await saver.getThread(T)).toBeUndefined();
        expect((await saver.listAudit({ threadId: T })).items).toEqual([]);
      },
      ["auditChain", "threadCatalog"],
    );

    spec(
      "a stored checkpoint does not change when the caller mutates its objects",
      async (saver) => {
        const checkpoint = makeCheckpoint("t1", checkpointId(1), {
          versions: { a: "v1" },
          metadata: { writes: { n: 1 } },
        });
        await saver.commitStep(makeCommit(checkpoint, null));
        checkpoint.versions["a"] = "mutated";
        checkpoint.metadata["writes"] = "mutated";
        const read = await saver.getCheckpoint(T, ROOT_STREAM);
        if (read) read.versions["a"] = "mutated-too";
        const again = await saver.getCheckpoint(T, ROOT_STREAM);
        expect(again?.versions).toEqual({ a: "v1" });
        expect(again?.metadata).toEqual({ writes: { n: 1 } });
      },
    );
  },
};
