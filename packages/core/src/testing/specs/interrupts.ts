/** Interrupts as indexed rows: by id, by thread, the cross-thread queue, deadlines. */
import { expect } from "vitest";
import type { Checkpointer, InterruptQuery, StoredInterrupt } from "../../checkpoint/types.ts";
import {
  at,
  checkpointId,
  makeInterrupt,
  makeOutcome,
  pausedResult,
  runId,
  taskId,
  threadId,
} from "../fixtures.ts";
import type { SpecModule } from "../suite.ts";

/** Stores interrupts through the task-outcome path, one outcome per thread. */
async function store(saver: Checkpointer, rows: StoredInterrupt[]): Promise<void> {
  for (const row of rows) {
    await saver.putTaskOutcome(
      makeOutcome(row.threadId, checkpointId(1), pausedResult(row.taskId), {
        stream: row.stream,
        interrupts: [row],
      }),
    );
  }
}

/** Follows cursors to the end, checking each page's size. */
async function listAll(saver: Checkpointer, query: InterruptQuery): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 200; page += 1) {
    const result = await saver.listInterrupts({ ...query, cursor });
    if (query.limit !== undefined) expect(result.items.length).toBeLessThanOrEqual(query.limit);
    ids.push(...result.items.map((i) => i.id));
    cursor = result.nextCursor;
    if (cursor === null) return ids;
  }
  throw new Error("listInterrupts did not terminate");
}

/** Specs of the interrupt read methods. */
export const interruptSpecs: SpecModule = {
  concern: "interrupts",
  register({ spec }) {
    spec(
      "getInterrupt returns the stored record, undefined for an unknown id",
      async (saver) => {
        const row = makeInterrupt("t1", "i1", {
          namespace: ["supervisor", "refund"],
          stream: "child-run",
          slot: "k:call_1",
          order: 2,
          tenant: "acme",
          deadline: at(3600),
          onTimeout: { kind: "value", value: { approved: false } },
          answerSchema: { type: "object", properties: { approved: { type: "boolean" } } },
          path: [
            { runId: runId("root"), graph: "supervisor", node: "refund", taskId: taskId("tp") },
            { runId: runId("run-1"), graph: "agent", node: "review", taskId: taskId("task-1") },
          ],
        });
        await store(saver, [row]);
        expect(await saver.getInterrupt(row.id)).toEqual(row);
        expect(await saver.getInterrupt(makeInterrupt("t1", "unknown").id)).toBeUndefined();
      },
      ["interruptQueue"],
    );

    spec(
      "getThreadInterrupts returns the thread's interrupts of all streams, oldest first",
      async (saver) => {
        await store(saver, [
          makeInterrupt("t1", "late", { createdAt: at(3) }),
          makeInterrupt("t1", "early", { createdAt: at(1), stream: "child" }),
          makeInterrupt("t2", "other", { createdAt: at(2) }),
          makeInterrupt("t1", "mid", { createdAt: at(2), status: "answered", answer: 1 }),
        ]);
        const ids = (rows: StoredInterrupt[]) => rows.map((r) => r.id);
        expect(ids(await saver.getThreadInterrupts(threadId("t1")))).toEqual([
          "early",
          "mid",
          "late",
        ]);
        expect(ids(await saver.getThreadInterrupts(threadId("t1"), "pending"))).toEqual([
          "early",
          "late",
        ]);
        expect(ids(await saver.getThreadInterrupts(threadId("t1"), "answered"))).toEqual(["mid"]);
        expect(await saver.getThreadInterrupts(threadId("none"))).toEqual([]);
      },
    );

    spec(
      "listInterrupts spans threads, newest first",
      async (saver) => {
        await store(saver, [
          makeInterrupt("t1", "a", { createdAt: at(1) }),
          makeInterrupt("t2", "b", { createdAt: at(3) }),
          makeInterrupt("t3", "c", { createdAt: at(2) }),
        ]);
        const page = await saver.listInterrupts({ status: "pending" });
        expect(page.items.map((i) => i.id)).toEqual(["b", "c", "a"]);
        expect(page.nextCursor).toBeNull();
        expect(page.items[0]).toEqual(makeInterrupt("t2", "b", { createdAt: at(3) }));
      },
      ["interruptQueue"],
    );

    spec(
      "listInterrupts pages with a cursor without duplicates or gaps",
      async (saver) => {
        // 23 rows, many sharing a timestamp, so the id must break ties for the cursor to be exact.
        const rows = Array.from({ length: 23 }, (_, n) =>
          makeInterrupt(`t${n % 4}`, `i${String(n).padStart(2, "0")}`, {
            createdAt: at(Math.floor(n / 3)),
          }),
        );
        await store(saver, rows);
        const expected = [...rows]
          .sort((a, b) =>
            a.createdAt === b.createdAt
              ? a.id < b.id
                ? 1
                : -1
              : a.createdAt < b.createdAt
                ? 1
                : -1,
          )
          .map((r) => r.id);
        for (const limit of [1, 4, 5, 23, 50]) {
          expect(await listAll(saver, { status: "pending", limit })).toEqual(expected);
        }
      },
      ["interruptQueue"],
    );

    spec(
      "a page is stable when newer interrupts arrive between pages",
      async (saver) => {
        await store(
          saver,
          [1, 2, 3, 4].map((s) => makeInterrupt("t1", `i${s}`, { createdAt: at(s) })),
        );
        const first = await saver.listInterrupts({ status: "pending", limit: 2 });
        expect(first.items.map((i) => i.id)).toEqual(["i4", "i3"]);
        await store(saver, [makeInterrupt("t1", "i9", { createdAt: at(9) })]);
        const second = await saver.listInterrupts({
          status: "pending",
          limit: 2,
          cursor: first.nextCursor,
        });
        expect(second.items.map((i) => i.id)).toEqual(["i2", "i1"]);
      },
      ["interruptQueue"],
    );

    spec(
      "a cursor the store did not make (garbage, or a key holding a NUL) is an InvalidInputError on every list",
      async (saver) => {
        await store(saver, [makeInterrupt("t1", "i1", { createdAt: at(1) })]);
        const forged = Buffer.from(JSON.stringify([at(1), "i\u0000"])).toString("base64url");
        for (const cursor of ["garbage", forged]) {
          const calls = [
            saver.listInterrupts({ status: "pending", cursor }),
            saver.listThreads({ cursor }),
            saver.listAudit({ cursor: cursor === forged ? "-1" : cursor }),
          ];
          for (const call of calls) {
            const error = await call.then(
              () => null,
              (e: unknown) => e,
            );
            expect((error as { code?: string } | null)?.code, cursor).toBe("invalid_input");
          }
        }
      },
      ["auditChain", "interruptQueue", "threadCatalog"],
    );

    spec(
      "listInterrupts filters by status, thread, graph, tenant and run",
      async (saver) => {
        await store(saver, [
          makeInterrupt("t1", "p1", {
            createdAt: at(1),
            tenant: "acme",
            graph: "support",
            path: [
              { runId: runId("run-1"), graph: "support", node: "review", taskId: taskId("task-1") },
            ],
          }),
          makeInterrupt("t1", "a1", {
            createdAt: at(2),
            tenant: "acme",
            status: "answered",
            answer: true,
          }),
          makeInterrupt("t2", "p2", { createdAt: at(3), tenant: "beta", runId: runId("run-2") }),
          makeInterrupt("t3", "p3", { createdAt: at(4), tenant: null, status: "cancelled" }),
        ]);
        const ids = (query: InterruptQuery) => listAll(saver, query);
        expect(await ids({})).toEqual(["p3", "p2", "a1", "p1"]);
        expect(await ids({ status: "pending" })).toEqual(["p2", "p1"]);
        expect(await ids({ status: "answered" })).toEqual(["a1"]);
        expect(await ids({ status: "cancelled" })).toEqual(["p3"]);
        expect(await ids({ threadId: threadId("t1") })).toEqual(["a1", "p1"]);
        expect(await ids({ graph: "support" })).toEqual(["p1"]);
        expect(await ids({ tenant: "acme" })).toEqual(["a1", "p1"]);
        expect(await ids({ tenant: null })).toEqual(["p3"]);
        expect(await ids({ runId: runId("run-2") })).toEqual(["p2"]);
        expect(await ids({ status: "pending", tenant: "acme", threadId: threadId("t1") })).toEqual([
          "p1",
        ]);
        expect(await ids({ status: "pending", tenant: "beta", threadId: threadId("t1") })).toEqual(
          [],
        );
      },
      ["interruptQueue"],
    );

    spec(
      "listExpiredInterrupts returns pending interrupts past their deadline, oldest deadline first",
      async (saver) => {
        await store(saver, [
          makeInterrupt("t1", "due-late", { deadline: at(50) }),
          makeInterrupt("t2", "due-early", { deadline: at(10) }),
          makeInterrupt("t1", "due-now", { deadline: at(60) }),
          makeInterrupt("t1", "future", { deadline: at(61) }),
          makeInterrupt("t1", "no-deadline"),
          makeInterrupt("t1", "answered", { deadline: at(5), status: "answered", answer: 1 }),
        ]);
        const ids = async (limit: number) =>
          (await saver.listExpiredInterrupts(at(60), limit)).map((i) => i.id);
        expect(await ids(10)).toEqual(["due-early", "due-late", "due-now"]);
        expect(await ids(2)).toEqual(["due-early", "due-late"]);
      },
      ["deadlineTimer"],
    );

    spec(
      "summarizePending counts pending interrupts by tenant and root graph, with the oldest createdAt",
      async (saver) => {
        // Optional in the interface; every store Rein ships has it.
        expect(await saver.summarizePending()).toEqual([]);
        const support = (graph: string) => ({
          graph,
          path: [
            { runId: runId("root"), graph: "support", node: "delegate", taskId: taskId("tp") },
            { runId: runId("run-1"), graph, node: "review", taskId: taskId("task-1") },
          ],
        });
        await store(saver, [
          makeInterrupt("t1", "s-late", {
            tenant: "acme",
            createdAt: at(10),
            ...support("refund"),
          }),
          makeInterrupt("t2", "s-early", {
            tenant: "acme",
            createdAt: at(5),
            ...support("support"),
          }),
          makeInterrupt("t3", "agent-acme", { tenant: "acme", createdAt: at(20) }),
          makeInterrupt("t4", "agent-globex", { tenant: "globex", createdAt: at(30) }),
          makeInterrupt("t5", "no-tenant", { createdAt: at(40) }),
          makeInterrupt("t6", "answered", {
            tenant: "acme",
            createdAt: at(1),
            status: "answered",
            answer: 1,
            ...support("support"),
          }),
          makeInterrupt("t7", "cancelled", {
            tenant: "acme",
            createdAt: at(2),
            status: "cancelled",
          }),
        ]);
        const key = (g: { tenant: string | null; rootGraph: string }) =>
          `${g.tenant ?? ""}/${g.rootGraph}`;
        const groups = (await saver.summarizePending()).sort((a, b) => (key(a) < key(b) ? -1 : 1));
        expect(groups).toEqual([
          { tenant: null, rootGraph: "agent", count: 1, oldestCreatedAt: at(40) },
          { tenant: "acme", rootGraph: "agent", count: 1, oldestCreatedAt: at(20) },
          { tenant: "acme", rootGraph: "support", count: 2, oldestCreatedAt: at(5) },
          { tenant: "globex", rootGraph: "agent", count: 1, oldestCreatedAt: at(30) },
        ]);
      },
      ["pendingSummaries"],
    );
  },
};
