import { describe, expect, it } from "vitest";
import { jsonSerializer } from "@rein/core";
import type { InterruptQuery } from "@rein/core/store";
import { runId } from "@rein/core/testing";
import { RowCodec } from "./codec.ts";
import { ListQueries } from "./queries.ts";
import { SqliteSaver } from "./saver.ts";

// SPEC: the approval queue is a query, not a scan. Every filter the queue offers must be served
// by an index that also gives its order, so a page costs the same with 20,000 threads as with 20.
describe("the approval queue's query plans", () => {
  const shapes: [string, InterruptQuery, string][] = [
    ["pending, across threads", { status: "pending" }, "interrupts_queue"],
    ["every status, across threads", {}, "interrupts_by_created"],
    ["pending, of a tenant", { status: "pending", tenant: "acme" }, "interrupts_by_tenant"],
    ["pending, of a graph", { status: "pending", graph: "support" }, "interrupts_by_graph"],
    ["of a run", { runId: runId("run-1") }, "interrupts_by_run"],
  ];

  for (const [name, query, index] of shapes)
    for (const after of [null, ["2026-12-01T00:00:00.000Z", "i_x"] as [string, string]])
      it(`${name}${after ? ", after a cursor" : ""}: reads ${index} in order, sorts nothing`, () => {
        const saver = new SqliteSaver({ path: ":memory:" });
        try {
          const lists = new ListQueries(saver.db, new RowCodec(jsonSerializer));
          const { statement, params } = lists.interrupts(query, after, 50);
          const plan = saver.db
            .prepare<[Record<string, unknown>], { detail: string }>(
              `EXPLAIN QUERY PLAN ${statement.source}`,
            )
            .all(params)
            .map((row) => row.detail);
          expect(plan.join(" | "), name).toMatch(new RegExp(`USING (COVERING )?INDEX ${index}\\b`));
          expect(plan.join(" | "), name).not.toMatch(/TEMP B-TREE/);
        } finally {
          void saver.close();
        }
      });
});
