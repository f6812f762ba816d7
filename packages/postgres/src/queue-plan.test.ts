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
        expect(plan, name).toMatch(new RegExp(`Index Only Scan using ${index} `));
      });
  },
);
