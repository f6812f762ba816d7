import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUEUE_QUERY_SHAPES } from "@rein/core/testing";
import { quoteSchema } from "./migrations.ts";
import { interruptCountQuery, interruptsQuery } from "./queries.ts";
import type { PostgresSaver } from "./saver.ts";
import { createTestSaver, destroyTestSaver, probePostgres, redactUrl } from "./testing.ts";

const probe = await probePostgres();

// SPEC: the approval queue is a query, not a scan. Each filter the queue offers must have an index
// that serves it in order. A fresh table is tiny, so the planner is told not to prefer a
// sequential or bitmap scan: what remains shows whether an index can give the page unsorted.
describe.skipIf(!probe.available)(
  `the approval queue's query plans, postgres at ${redactUrl(probe.url)}`,
  () => {
    let saver: PostgresSaver;
    let client: pg.Client;
    beforeAll(async () => {
      saver = await createTestSaver(probe.url);
      client = new pg.Client({ connectionString: probe.url });
      await client.connect();
      await client.query("SET enable_seqscan = off; SET enable_bitmapscan = off");
      // Rows of many tenants and graphs, a fifth of them pending, analyzed: on an empty table every plan would
      // pick the smallest index (the partial one of a thread's pending rows) for want of stats.
      const s = quoteSchema(saver.schema);
      await saver.pool.query(
        `INSERT INTO ${s}.interrupts
           (id, thread_id, run_id, task_id, graph, root_graph, tenant, status, created_at, record)
         SELECT 'seed' || n, 'seed-t' || n, 'r' || n, 'k', 'g' || (n % 20), 'a' || (n % 10),
           'tenant' || (n % 50), CASE WHEN n % 5 = 0 THEN 'pending' ELSE 'answered' END,
           lpad(n::text, 8, '0'), '{}'
         FROM generate_series(1, 5000) AS n`,
      );
      await saver.pool.query(`ANALYZE ${s}.interrupts`);
    });
    afterAll(async () => {
      await client?.end();
      if (saver) await destroyTestSaver(saver);
    });

    for (const { name, query, index, after } of QUEUE_QUERY_SHAPES)
      it(`${name}: reads ${index} in order, sorts nothing`, async () => {
        const { text, values } = interruptsQuery(quoteSchema(saver.schema), query, after, 50);
        const plan = (await client.query<{ "QUERY PLAN": string }>(`EXPLAIN ${text}`, values)).rows
          .map((row) => row["QUERY PLAN"])
          .join(" | ");
        expect(plan, name).toMatch(new RegExp(`Index (Only )?Scan using ${index} `));
        expect(plan, name).not.toMatch(/\bSort\b/);
      });

    // The queue's total is counted from the same index, without visiting the table.
    for (const { name, query, index } of QUEUE_QUERY_SHAPES.filter(
      (shape) => shape.after === null && shape.query.status !== undefined,
    ))
      it(`counting ${name}: reads only ${index}`, async () => {
        const { text, values } = interruptCountQuery(quoteSchema(saver.schema), query);
        const plan = (await client.query<{ "QUERY PLAN": string }>(`EXPLAIN ${text}`, values)).rows
          .map((row) => row["QUERY PLAN"])
          .join(" | ");
        // Counting every pending row may equally read the partial index of pending rows.
        const indexes =
          query.tenant !== undefined ||
          query.graph !== undefined ||
          query.subAgentGraph !== undefined
            ? index
            : `(${index}|interrupts_pending_by_thread)`;
        expect(plan, name).toMatch(new RegExp(`Index Only Scan using ${indexes} `));
      });
  },
);

// What every call reads — a thread's pending count and its oldest pending interrupts — must be one
// thread's index range, also before the tables were ever analyzed (a fresh database under load):
// the planner must not AND the thread's index with the queue's `status` index, which reads every
// pending row of every thread.
describe.skipIf(!probe.available)(
  `a thread's pending interrupts, postgres at ${redactUrl(probe.url)}`,
  () => {
    let saver: PostgresSaver;
    beforeAll(async () => {
      saver = await createTestSaver(probe.url);
    });
    afterAll(async () => {
      if (saver) await destroyTestSaver(saver);
    });

    it("are read from interrupts_pending_by_thread, with 5,000 other threads paused", async () => {
      const s = quoteSchema(saver.schema);
      await saver.pool.query(
        `INSERT INTO ${s}.interrupts (id, thread_id, run_id, task_id, graph, status, created_at, record)
       SELECT 'i' || n, 't' || n, 'r' || n, 'k', 'g', 'pending', lpad(n::text, 8, '0'), '{}'
       FROM generate_series(1, 5000) AS n`,
      );
      const plan = async (sql: string): Promise<string> =>
        (await saver.pool.query<{ "QUERY PLAN": string }>(`EXPLAIN ${sql}`)).rows
          .map((row) => row["QUERY PLAN"])
          .join(" | ");
      const page = await plan(
        `SELECT * FROM ${s}.interrupts WHERE thread_id = 't42' AND status = 'pending' ORDER BY created_at, seq LIMIT 1`,
      );
      const total = await plan(
        `SELECT count(*) FROM ${s}.interrupts WHERE thread_id = 't42' AND status = 'pending'`,
      );
      for (const text of [page, total]) {
        expect(text).toMatch(/Index (Only )?Scan using interrupts_pending_by_thread /);
        expect(text).not.toMatch(/interrupts_queue/);
      }
    });
  },
);
