/**
 * Round trips to the server per call, counted on the real Postgres: every statement the store
 * sends goes through `pool.query`, and each is one round trip. A resume of a thread the process
 * has not touched is three — the lease with the answer's reads, the answer with the
 * continuation's reads, the commit with the release — and this file fails if one is added back.
 */
import { pauseResumeGraph } from "@rein/core/testing/runtime";
import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { Command, END, START, StateGraph, lastValue } from "@rein/core";
import type { PostgresSaver } from "./saver.ts";
import { probePostgres, redactUrl, SharedSchemaSavers } from "./testing.ts";

const probe = await probePostgres();

/** The statement names a pool sends, in order (the schema prefix cut off), while counting. */
function countQueries(pool: pg.Pool): { sent: string[] } {
  const sent: string[] = [];
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as { query: unknown }).query = (...args: unknown[]) => {
    const first = args[0] as { name?: string; text?: string } | string;
    const name = typeof first === "string" ? first : (first.name ?? first.text ?? "?");
    sent.push(name.replace(/^rein_[0-9a-f]{10}_/, ""));
    return query(...args);
  };
  return { sent };
}

describe.skipIf(!probe.available)(
  `round trips per call, postgres at ${redactUrl(probe.url)}`,
  () => {
    const shared = new SharedSchemaSavers(probe.url);
    /** `count` savers on one fresh schema, each with a pool of its own: one process each. */
    const processes = (count: number): Promise<PostgresSaver[]> => shared.open(count);
    afterEach(() => shared.close());

    it("a resume of a thread this process never touched: the lease, the answer, the commit", async () => {
      const [pausing, resuming] = (await processes(2)) as [PostgresSaver, PostgresSaver];
      expect((await pauseResumeGraph(pausing).invoke({ n: 1 }, { threadId: "t1" })).status).toBe(
        "interrupted",
      );
      const { sent } = countQueries(resuming.pool);
      const done = await pauseResumeGraph(resuming).resume(
        { threadId: "t1" },
        Command.resume("yes"),
      );
      expect(done.status).toBe("done");
      expect(done.values).toEqual({ n: 2, answer: "yes" });
      expect(sent).toEqual(["lease_and_read", "answer_write", "commit_step"]);
      // Nothing is left for another process: the lease ended with the commit, the answer is stored.
      expect(await pausing.getLease(done.threadId as never)).toBeUndefined();
      const [row] = await pausing.getThreadInterrupts(done.threadId);
      expect(row?.status).toBe("answered");
    });

    it("a resume by the process that paused, and one of a resumeMap: three round trips too", async () => {
      const [saver] = (await processes(1)) as [PostgresSaver];
      const graph = pauseResumeGraph(saver);
      const paused = await graph.invoke({ n: 1 }, { threadId: "t2" });
      const { sent } = countQueries(saver.pool);
      expect((await graph.resume({ threadId: "t2" }, Command.resume("a"))).values.answer).toBe("a");
      expect(sent).toEqual(["lease_and_read", "answer_write", "commit_step"]);
      const again = await graph.invoke({ n: 5 }, { threadId: "t3" });
      const id = again.interrupts[0]?.id as string;
      sent.length = 0;
      const done = await graph.resume({ threadId: "t3" }, Command.resumeMap({ [id]: "b" }));
      expect(done.values).toEqual({ n: 6, answer: "b" });
      expect(sent).toEqual(["lease_and_read", "answer_write", "commit_step"]);
      expect(paused.status).toBe("interrupted");
    });

    it("a targeted resume that names its thread reads the run under the lease, not before", async () => {
      const [pausing, resuming] = (await processes(2)) as [PostgresSaver, PostgresSaver];
      const paused = await pauseResumeGraph(pausing).invoke({ n: 1 }, { threadId: "t4" });
      const interrupt = paused.interrupts[0];
      const { sent } = countQueries(resuming.pool);
      const done = await pauseResumeGraph(resuming).resumeTargeted(
        { runId: paused.runId, namespace: [], interruptId: interrupt?.id },
        Command.resume("c"),
        { threadId: "t4" },
      );
      expect(done.values).toEqual({ n: 2, answer: "c" });
      expect(sent).toEqual(["lease_and_read", "answer_write", "commit_step"]);
      // A run of another thread named with this thread's id is not found, and nothing is answered.
      const other = await pauseResumeGraph(pausing).invoke({ n: 1 }, { threadId: "t5" });
      await expect(
        pauseResumeGraph(resuming).resumeTargeted(
          { runId: other.runId, namespace: [] },
          Command.resume("x"),
          { threadId: "t4" },
        ),
      ).rejects.toMatchObject({ code: "not_found" });
      expect((await pausing.getThreadInterrupts("t5" as never, "pending")).length).toBe(1);
    });

    it("a start: the lease with its head read, then one write per checkpoint, nothing after", async () => {
      const [saver] = (await processes(1)) as [PostgresSaver];
      const { sent } = countQueries(saver.pool);
      const paused = await pauseResumeGraph(saver).invoke({ n: 1 }, { threadId: "t6" });
      expect(paused.status).toBe("interrupted");
      expect(paused.pendingCount).toBe(1);
      expect(paused.interrupts.map((i) => [i.node, i.payload, i.status])).toEqual([
        ["ask", "ok?", "pending"],
      ]);
      // The lease with the head; the input checkpoint; `prepare`'s step; `ask`'s pause, which ends
      // the lease and reads the run result's page of pending interrupts after it: 2 + 1 per step.
      expect(sent).toEqual(["lease_and_read", "commit_step", "commit_step", "put_task_outcome"]);
      // A start that finishes is 2 + 1 per step as well: lease, input, one commit per step.
      const done = new StateGraph({ n: lastValue<number>(() => 0) })
        .addNode("a", (s) => ({ n: s.n + 1 }))
        .addNode("b", (s) => ({ n: s.n * 10 }))
        .addEdge(START, "a")
        .addEdge("a", "b")
        .addEdge("b", END)
        .compile({ checkpointer: saver });
      sent.length = 0;
      expect((await done.invoke({ n: 1 }, { threadId: "t7" })).values).toEqual({ n: 20 });
      expect(sent).toEqual(["lease_and_read", "commit_step", "commit_step", "commit_step"]);
    });
  },
);
