/** Threads: create, update, read, list newest first with tenant filter and cursor. */
import { expect } from "vitest";
import type { Checkpointer, ThreadRecord } from "../../checkpoint/types.ts";
import { InvalidIdError } from "../../errors.ts";
import {
  at,
  checkpointId,
  makeCheckpoint,
  makeCommit,
  makeInterrupt,
  makeRun,
  makeSteering,
  makeThread,
  threadId,
} from "../fixtures.ts";
import type { SpecModule } from "../suite.ts";
import { ROOT_STREAM } from "../../keys.ts";

async function listAll(
  saver: Checkpointer,
  query: { tenant?: string | null; limit: number },
): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page += 1) {
    const result: { items: ThreadRecord[]; nextCursor: string | null } = await saver.listThreads({
      ...query,
      cursor,
    });
    expect(result.items.length).toBeLessThanOrEqual(query.limit);
    ids.push(...result.items.map((t) => t.threadId));
    cursor = result.nextCursor;
    if (cursor === null) return ids;
  }
  throw new Error("listThreads did not terminate");
}

/** Specs of the thread methods. */
export const threadSpecs: SpecModule = {
  concern: "threads",
  register({ spec }) {
    spec(
      "malformed thread ids are refused with InvalidIdError by putThread, commitStep and acquireLease",
      async (saver) => {
        const bad = ["a\uD800", "\uDC00b", "a\u0000b", "x".repeat(257), ""];
        for (const id of bad) {
          await expect(saver.putThread(makeThread(id)), JSON.stringify(id)).rejects.toBeInstanceOf(
            InvalidIdError,
          );
          await expect(
            saver.commitStep(makeCommit(makeCheckpoint(id, checkpointId(1)), null)),
          ).rejects.toBeInstanceOf(InvalidIdError);
          await expect(saver.acquireLease(threadId(id), "me", 1000)).rejects.toBeInstanceOf(
            InvalidIdError,
          );
        }
        expect((await saver.listThreads({})).items).toEqual([]);
        // Surrogate pairs (emoji), 256 code units and other control characters are fine.
        const good = `\uD83D\uDE00\u0001${"y".repeat(253)}`;
        await saver.putThread(makeThread(good));
        expect((await saver.getThread(threadId(good)))?.threadId).toBe(good);
      },
      ["threadCatalog"],
    );
    spec(
      "putThread then getThread returns the record",
      async (saver) => {
        const thread = makeThread("t1", {
          tenant: "acme",
          metadata: { title: "Refund", tags: ["a"] },
        });
        await saver.putThread(thread);
        expect(await saver.getThread(threadId("t1"))).toEqual(thread);
      },
      ["threadCatalog"],
    );

    spec(
      "a thread's graph is a column: putThread and commitStep store it, every read returns it",
      async (saver) => {
        await saver.putThread(makeThread("t1", { graph: "support-desk", tenant: "acme" }));
        const made = makeThread("t2", { graph: "triage", tenant: "acme", createdAt: at(1) });
        await saver.commitStep(
          makeCommit(makeCheckpoint("t2", checkpointId(1)), null, { thread: made }),
        );
        await saver.putThread(makeThread("t3", { tenant: "acme", createdAt: at(2) }));
        expect((await saver.getThread(threadId("t1")))?.graph).toBe("support-desk");
        expect((await saver.getThreadHead(threadId("t2"), ROOT_STREAM)).thread).toEqual(made);
        const page = await saver.listThreads({ tenant: "acme" });
        expect(page.items.map((t) => [t.threadId, t.graph])).toEqual([
          ["t3", undefined],
          ["t2", "triage"],
          ["t1", "support-desk"],
        ]);
        // The graph is the caller's, not part of the metadata.
        expect((await saver.getThread(threadId("t1")))?.metadata).toEqual({});
      },
      ["threadCatalog"],
    );

    spec(
      "getThread of an unknown thread is undefined",
      async (saver) => {
        await saver.putThread(makeThread("t1"));
        expect(await saver.getThread(threadId("nope"))).toBeUndefined();
      },
      ["threadCatalog"],
    );

    spec(
      "putThread on an existing thread updates tenant and metadata, keeps createdAt",
      async (saver) => {
        await saver.putThread(
          makeThread("t1", { metadata: { v: 1 }, createdAt: at(1), updatedAt: at(1) }),
        );
        await saver.putThread(
          makeThread("t1", {
            tenant: "acme",
            metadata: { v: 2 },
            createdAt: at(9),
            updatedAt: at(9),
          }),
        );
        expect(await saver.getThread(threadId("t1"))).toEqual(
          makeThread("t1", {
            tenant: "acme",
            metadata: { v: 2 },
            createdAt: at(1),
            updatedAt: at(9),
          }),
        );
      },
      ["threadCatalog"],
    );

    spec(
      "listThreads is newest first and pages without duplicates or gaps",
      async (saver) => {
        // Two threads share a timestamp: the id breaks the tie, so paging stays exact.
        const seconds = [5, 1, 3, 3, 4, 2, 6];
        for (const [i, s] of seconds.entries()) {
          await saver.putThread(makeThread(`t${i}`, { createdAt: at(s), updatedAt: at(s) }));
        }
        const all = await saver.listThreads({ limit: 100 });
        expect(all.nextCursor).toBeNull();
        expect(all.items.map((t) => t.threadId)).toEqual([
          "t6",
          "t0",
          "t4",
          "t3",
          "t2",
          "t5",
          "t1",
        ]);
        expect(await listAll(saver, { limit: 2 })).toEqual([
          "t6",
          "t0",
          "t4",
          "t3",
          "t2",
          "t5",
          "t1",
        ]);
      },
      ["threadCatalog"],
    );

    spec(
      "listThreads filters by tenant, null meaning threads without one",
      async (saver) => {
        await saver.putThread(makeThread("a1", { tenant: "acme", createdAt: at(1) }));
        await saver.putThread(makeThread("b1", { tenant: "beta", createdAt: at(2) }));
        await saver.putThread(makeThread("n1", { tenant: null, createdAt: at(3) }));
        await saver.putThread(makeThread("a2", { tenant: "acme", createdAt: at(4) }));
        expect(await listAll(saver, { tenant: "acme", limit: 1 })).toEqual(["a2", "a1"]);
        expect(await listAll(saver, { tenant: null, limit: 10 })).toEqual(["n1"]);
        expect(await listAll(saver, { limit: 10 })).toEqual(["a2", "n1", "b1", "a1"]);
      },
      ["threadCatalog"],
    );

    spec(
      "a stored thread does not change when the caller mutates its objects",
      async (saver) => {
        const thread = makeThread("t1", { metadata: { nested: { n: 1 } } });
        await saver.putThread(thread);
        (thread.metadata["nested"] as { n: number }).n = 2;
        const read = await saver.getThread(threadId("t1"));
        (read?.metadata["nested"] as { n: number }).n = 3;
        expect((await saver.getThread(threadId("t1")))?.metadata).toEqual({ nested: { n: 1 } });
      },
      ["threadCatalog"],
    );

    spec(
      "getThreadHead reads the head checkpoint, its run, the thread, the pending count and the steering log",
      async (saver) => {
        const T = threadId("t1");
        expect(await saver.getThreadHead(T, ROOT_STREAM)).toEqual({
          checkpoint: undefined,
          run: undefined,
          thread: undefined,
          pendingInterrupts: 0,
          steering: [],
        });
        const run = makeRun("t1", "run-1", { status: "interrupted" });
        const c1 = makeCheckpoint("t1", checkpointId(1));
        const c2 = makeCheckpoint("t1", checkpointId(2), { parentId: c1.id });
        await saver.commitStep(makeCommit(c1, null, { thread: makeThread("t1", { tenant: "a" }) }));
        await saver.commitStep(
          makeCommit(c2, c1.id, {
            runs: [run],
            interrupts: [
              makeInterrupt("t1", "p1"),
              makeInterrupt("t1", "p2", { stream: "child" }),
              makeInterrupt("t1", "done", { status: "answered", answer: 1 }),
            ],
          }),
        );
        await saver.commitStep(
          makeCommit(makeCheckpoint("t2", checkpointId(1)), null, {
            interrupts: [makeInterrupt("t2", "other")],
          }),
        );
        const first = makeSteering("t1", "s1", { text: "be brief" });
        const second = makeSteering("t1", "s2", { text: "cite the policy" });
        await saver.appendSteering(first);
        await saver.appendSteering(makeSteering("t2", "s-other"));
        await saver.appendSteering(second);
        const head = await saver.getThreadHead(T, ROOT_STREAM);
        expect(head.steering).toEqual([first, second]);
        expect(head.checkpoint).toEqual(c2);
        expect(head.run).toEqual(run);
        expect(head.thread).toMatchObject({ threadId: "t1", tenant: "a" });
        expect(head.pendingInterrupts).toBe(2);
        expect((await saver.getThreadHead(T, "child")).checkpoint).toBeUndefined();
      },
      ["steering"],
    );

    spec(
      "getThreadHead hands back a known checkpoint while it is the head, and reads the new head once it moved",
      async (saver) => {
        const T = threadId("t1");
        const c1 = makeCheckpoint("t1", checkpointId(1));
        await saver.commitStep(makeCommit(c1, null, { runs: [makeRun("t1", "run-1")] }));
        const known = (await saver.getThreadHead(T, ROOT_STREAM)).checkpoint;
        expect(known).toEqual(c1);
        const again = await saver.getThreadHead(T, ROOT_STREAM, known);
        // The very object the caller holds: nothing was decoded for it. The rest is read fresh.
        expect(again.checkpoint).toBe(known);
        expect(again.run).toMatchObject({ runId: "run-1" });
        const c2 = makeCheckpoint("t1", checkpointId(2), { parentId: c1.id });
        await saver.commitStep(makeCommit(c2, c1.id));
        const moved = await saver.getThreadHead(T, ROOT_STREAM, known);
        expect(moved.checkpoint).not.toBe(known);
        expect(moved.checkpoint).toEqual(c2);
        // A checkpoint of another thread or stream never stands in for a head.
        await saver.commitStep(makeCommit(makeCheckpoint("t2", checkpointId(2)), null));
        const other = await saver.getThreadHead(threadId("t2"), ROOT_STREAM, moved.checkpoint);
        expect(other.checkpoint).not.toBe(moved.checkpoint);
        expect(other.checkpoint?.threadId).toBe("t2");
        expect(
          (await saver.getThreadHead(T, "child", moved.checkpoint)).checkpoint,
        ).toBeUndefined();
      },
    );
  },
};
