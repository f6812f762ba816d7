import { describe, expect, it } from "vitest";
import { jsonSerializer } from "@rein/core";
import { QUEUE_QUERY_SHAPES } from "@rein/core/testing";
import { RowCodec } from "./codec.ts";
import { ListQueries } from "./queries.ts";
import { SqliteSaver } from "./saver.ts";

// SPEC: the approval queue is a query, not a scan. Every filter the queue offers must be served
// by an index that also gives its order, so a page costs the same with 20,000 threads as with 20.
describe("the approval queue's query plans", () => {
  for (const { name, query, index, after } of QUEUE_QUERY_SHAPES)
    it(`${name}: reads ${index} in order, sorts nothing`, () => {
      const saver = new SqliteSaver({ path: ":memory:" });
      try {
        const lists = new ListQueries(saver.db, new RowCodec(jsonSerializer));
        const { statement, params } = lists.interrupts(query, after, 50);
        const plan = saver.db
          .prepare(`EXPLAIN QUERY PLAN ${statement.sourceSQL}`)
          .all(params)
          .map((row) => String(row["detail"]));
        expect(plan.join(" | "), name).toMatch(new RegExp(`USING (COVERING )?INDEX ${index}\\b`));
        expect(plan.join(" | "), name).not.toMatch(/TEMP B-TREE/);
      } finally {
        void saver.close();
      }
    });

  // The queue's total is counted from the same index, without reading the rows.
  for (const { name, query, index } of QUEUE_QUERY_SHAPES.filter(
    (shape) => shape.after === null && shape.query.status !== undefined,
  ))
    it(`counting ${name}: reads only ${index}`, () => {
      const saver = new SqliteSaver({ path: ":memory:" });
      try {
        const lists = new ListQueries(saver.db, new RowCodec(jsonSerializer));
        const { statement, params } = lists.interruptCount(query);
        const plan = saver.db
          .prepare(`EXPLAIN QUERY PLAN ${statement.sourceSQL}`)
          .all(params)
          .map((row) => String(row["detail"]));
        expect(plan.join(" | "), name).toMatch(new RegExp(`USING COVERING INDEX ${index}\\b`));
      } finally {
        void saver.close();
      }
    });
});
