/**
 * The approval queue's query shapes, for the SQL stores' plan tests: each filter `listInterrupts`
 * offers, the index both SQL backends name for it, and whether the page starts after a cursor.
 */
import type { InterruptQuery } from "../checkpoint/types.ts";
import { runId } from "./fixtures.ts";

/** One query the approval queue makes, and the index that must serve it in order. */
export interface QueueQueryShape {
  /** The test's name for the shape. */
  name: string;
  query: InterruptQuery;
  /** The index that must give the page without a sort. */
  index: string;
  /** The keyset position the page starts after (`null`: the first page). */
  after: [createdAt: string, id: string] | null;
}

const FILTERS: [string, InterruptQuery, string][] = [
  ["pending, across threads", { status: "pending" }, "interrupts_queue"],
  ["every status, across threads", {}, "interrupts_by_created"],
  ["pending, of a tenant", { status: "pending", tenant: "acme" }, "interrupts_by_tenant"],
  ["pending, of an app", { status: "pending", graph: "support" }, "interrupts_by_root_graph"],
  [
    "pending, of a sub-agent graph",
    { status: "pending", subAgentGraph: "refund_agent" },
    "interrupts_by_graph",
  ],
  ["of a run", { runId: runId("run-1") }, "interrupts_by_run"],
];

/** Every filter of the queue, as a first page and as a page after a cursor. */
export const QUEUE_QUERY_SHAPES: readonly QueueQueryShape[] = FILTERS.flatMap(
  ([name, query, index]) =>
    [null, ["2026-12-01T00:00:00.000Z", "i_x"] as [string, string]].map((after) => ({
      name: `${name}${after ? ", after a cursor" : ""}`,
      query,
      index,
      after,
    })),
);
