/** Steering and audit logs: append-only, in order, audit paged by cursor and tenant. */
import { expect } from "vitest";
import type { AuditQuery, Checkpointer } from "../../checkpoint/types.ts";
import {
  at,
  checkpointId,
  interruptId,
  makeAudit,
  makeSteering,
  makeThread,
  taskId,
  threadId,
} from "../fixtures.ts";
import type { SpecModule } from "../suite.ts";

async function auditIds(saver: Checkpointer, query: AuditQuery): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page += 1) {
    const result = await saver.listAudit({ ...query, cursor });
    if (query.limit !== undefined) expect(result.items.length).toBeLessThanOrEqual(query.limit);
    ids.push(...result.items.map((a) => a.id));
    cursor = result.nextCursor;
    if (cursor === null) return ids;
  }
  throw new Error("listAudit did not terminate");
}

/** Specs of the steering and audit logs. */
export const steeringAuditSpecs: SpecModule = {
  concern: "steering-audit",
  register({ spec }) {
    spec(
      "listSteering returns the thread's records oldest first, all fields kept",
      async (saver) => {
        const first = makeSteering("t1", "s1", {
          taskId: taskId("task-refund"),
          interruptId: interruptId("i1"),
          namespace: ["supervisor", "refund"],
          text: "Refund half only",
          checkpointId: checkpointId(3),
          createdAt: at(1),
        });
        const second = makeSteering("t1", "s2", { createdAt: at(2), actor: "bob@example.com" });
        await saver.appendSteering(first);
        await saver.appendSteering(makeSteering("t2", "s3"));
        await saver.appendSteering(second);
        expect(await saver.listSteering(threadId("t1"))).toEqual([first, second]);
        expect(await saver.listSteering(threadId("none"))).toEqual([]);
      },
      ["steering"],
    );

    spec(
      "steering is append-only: records with equal content are all kept",
      async (saver) => {
        await saver.appendSteering(makeSteering("t1", "s1", { text: "same" }));
        await saver.appendSteering(makeSteering("t1", "s2", { text: "same" }));
        await saver.appendSteering(makeSteering("t1", "s3", { text: "same" }));
        expect((await saver.listSteering(threadId("t1"))).map((s) => s.id)).toEqual([
          "s1",
          "s2",
          "s3",
        ]);
      },
      ["steering"],
    );

    spec(
      "listAudit returns records oldest first in append order, all fields kept",
      async (saver) => {
        const records = [
          makeAudit("t1", "a1", { action: "steer", data: { text: "go" } }),
          makeAudit("t2", "a2", { action: "update_state", runId: null }),
          makeAudit("t1", "a3", { action: "answer", interruptId: interruptId("i1"), data: 42 }),
        ];
        for (const record of records) await saver.appendAudit(record);
        expect((await saver.listAudit({})).items).toEqual(records);
        expect((await saver.listAudit({ threadId: threadId("t1") })).items).toEqual([
          records[0],
          records[2],
        ]);
      },
      ["auditChain"],
    );

    spec(
      "listAudit pages with a cursor without duplicates or gaps",
      async (saver) => {
        const ids = Array.from({ length: 11 }, (_, n) => `a${n}`);
        for (const [n, id] of ids.entries()) {
          await saver.appendAudit(makeAudit(n % 3 === 0 ? "t2" : "t1", id, { createdAt: at(0) }));
        }
        for (const limit of [1, 3, 11, 20]) {
          expect(await auditIds(saver, { limit })).toEqual(ids);
        }
        expect(await auditIds(saver, { threadId: threadId("t2"), limit: 2 })).toEqual([
          "a0",
          "a3",
          "a6",
          "a9",
        ]);
      },
      ["auditChain"],
    );

    spec(
      "listAudit filters by the tenant of the record's thread",
      async (saver) => {
        await saver.putThread(makeThread("ta", { tenant: "acme" }));
        await saver.putThread(makeThread("tb", { tenant: "beta" }));
        await saver.putThread(makeThread("tn", { tenant: null }));
        await saver.appendAudit(makeAudit("ta", "a1"));
        await saver.appendAudit(makeAudit("tb", "a2"));
        await saver.appendAudit(makeAudit("tn", "a3"));
        await saver.appendAudit(makeAudit("ta", "a4"));
        expect(await auditIds(saver, { tenant: "acme", limit: 1 })).toEqual(["a1", "a4"]);
        expect(await auditIds(saver, { tenant: null })).toEqual(["a3"]);
        expect(await auditIds(saver, { tenant: "acme", threadId: threadId("tb") })).toEqual([]);
      },
      ["auditChain", "threadCatalog"],
    );
  },
};
