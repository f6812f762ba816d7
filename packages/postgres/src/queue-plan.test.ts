import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runId } from "@rein/core/testing";
import type { InterruptQuery } from "@rein/core/store";
import { quoteSchema } from "./migrations.ts";
import { interruptsQuery } from "./queries.ts";
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

    const shapes: [string, InterruptQuery, string][] = [
      ["pending, across threads", { status: "pending" }, "interrupts_queue"],
      ["every status, across threads", {}, "interrupts_by_created"],
      ["pending, of a tenant", { status: "pending", tenant: "acme" }, "interrupts_by_tenant"],
      ["pending, of a graph", { status: "pending", graph: "support" }, "interrupts_by_graph"],
      ["of a run", { runId: runId("run-1") }, "interrupts_by_run"],
    ];

    for (const [name, query, index] of shapes)
      for (const after of [null, ["2026-12-01T00:00:00.000Z", "i_x"] as [string, string]])
        it(`${name}${after ? ", after a cursor" : ""}: reads ${index} in order, sorts nothing`, async () => {
          const { text, values } = interruptsQuery(quoteSchema(saver.schema), query, after, 50);
          const plan = (
            await client.query<{ "QUERY PLAN": string }>(`EXPLAIN ${text}`, values)
          ).rows
            .map((row) => row["QUERY PLAN"])
            .join(" | ");
          expect(plan, name).toMatch(new RegExp(`Index (Only )?Scan using ${index} `));
          expect(plan, name).not.toMatch(/\bSort\b/);
        });
  },
);
