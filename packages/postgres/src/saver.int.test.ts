/**
 * The Postgres store shared by several processes: each saver here has its own pool, so its
 * statements run in other sessions, as another process's would.
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { CheckpointConflictError, type CheckpointId } from "@rein/core";
import {
  checkpointId,
  interruptId,
  makeCheckpoint,
  makeCommit,
  makeInterrupt,
  makeOutcome,
  pausedResult,
  threadId,
} from "@rein/core/testing";
import { PostgresSaver } from "./saver.ts";
import { probePostgres, redactUrl, SharedSchemaSavers, testSchemaName } from "./testing.ts";

const probe = await probePostgres();

describe.skipIf(!probe.available)(
  `PostgresSaver across sessions at ${redactUrl(probe.url)}`,
  () => {
    const shared = new SharedSchemaSavers(probe.url);
    /** `count` savers on one fresh schema, each with a pool of its own: one process each. */
    const processes = (count: number): Promise<PostgresSaver[]> => shared.open(count);
    afterEach(() => shared.close());

    it("commits racing from several processes on one head: exactly one wins each round", async () => {
      const racers = await processes(4);
      const [first] = racers as [PostgresSaver];
      let head: CheckpointId | null = null;
      let next = 1;
      for (let round = 0; round < 10; round += 1) {
        const attempts: { id: CheckpointId; promise: Promise<void> }[] = racers.map((saver) => {
          const id = checkpointId(next++);
          const cp = makeCheckpoint("t1", id, { parentId: head, step: round });
          return { id, promise: saver.commitStep(makeCommit(cp, head)) };
        });
        const results = await Promise.allSettled(attempts.map((a) => a.promise));
        const winners = attempts.filter((_, i) => results[i]?.status === "fulfilled");
        expect(winners).toHaveLength(1);
        for (const r of results) {
          if (r.status === "rejected") expect(r.reason).toBeInstanceOf(CheckpointConflictError);
        }
        head = winners[0]?.id ?? null;
        expect((await first.getCheckpoint(threadId("t1"), ""))?.id).toBe(head);
      }
      expect(await first.listCheckpoints(threadId("t1"), "")).toHaveLength(10);
    });

    it("answers racing from several processes on one interrupt: exactly one wins", async () => {
      const racers = await processes(4);
      const [first] = racers as [PostgresSaver];
      const c1 = checkpointId(1);
      await first.commitStep(makeCommit(makeCheckpoint("t1", c1), null));
      await first.putTaskOutcome(
        makeOutcome("t1", c1, pausedResult("task-1"), {
          interrupts: [makeInterrupt("t1", "i1")],
        }),
      );
      const outcomes = await Promise.all(
        racers.map((saver, n) =>
          saver.answerInterrupts({
            threadId: threadId("t1"),
            answers: [{ id: interruptId("i1"), value: n }],
            wake: [{ stream: "", checkpointId: c1, taskId: pausedResult("task-1").taskId }],
            actor: `person-${n}`,
            action: "answer",
          }),
        ),
      );
      const winners = outcomes.flatMap((o, n) => (o.ok ? [n] : []));
      expect(winners).toHaveLength(1);
      const row = await first.getInterrupt(interruptId("i1"));
      expect(row?.answer).toBe(winners[0]);
      expect((await first.listAudit({ threadId: threadId("t1") })).items).toHaveLength(1);
    });

    it("close() leaves a pool it was given open", async () => {
      const pool = new pg.Pool({ connectionString: probe.url });
      try {
        const saver = new PostgresSaver({ pool, schema: testSchemaName() });
        await saver.close();
        expect((await pool.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
      } finally {
        await pool.end();
      }
    });
  },
);

describe.skipIf(!probe.available)("PostgresSaver and a server that drops connections", () => {
  it("survives the server terminating its idle connections, and keeps working", async () => {
    const schema = testSchemaName();
    const dropped: Error[] = [];
    const saver = await PostgresSaver.connect({
      connectionString: probe.url,
      schema,
      onIdleError: (e) => dropped.push(e),
    });
    const admin = new pg.Pool({ connectionString: probe.url });
    try {
      await saver.getThread(threadId("t"));
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND state = 'idle' AND query LIKE $1",
        [`%${schema}%`],
      );
      await expect.poll(() => dropped.length, { timeout: 5_000, interval: 20 }).toBeGreaterThan(0);
      expect(await saver.getThread(threadId("t"))).toBeUndefined();
    } finally {
      await saver.close();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  });
});
