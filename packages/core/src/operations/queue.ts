/**
 * The approval queue: pending interrupts across threads, shaped for the people who answer them.
 */
import { requireCapability } from "../checkpoint/capabilities.ts";
import type { RuntimeStore, InterruptQuery, StoredInterrupt } from "../checkpoint/types.ts";
import type { Interrupt, RunPathEntry } from "../types.ts";
import { toPublicInterrupt } from "../interrupts/records.ts";

/** Query of the approval queue. */
export type InterruptListQuery = Omit<InterruptQuery, "threadId"> & { threadId?: string };

/** One item of the approval queue. */
export interface InterruptListItem extends Interrupt {
  /** Run-tree path, root first: `[{ runId, graph, node, taskId }]`. */
  path: RunPathEntry[];
  /** Name of the graph that owns the task. */
  graph: string;
  /** For an interrupt inside a child run: the child graph's name plus its run id. */
  subAgentId: string | null;
  /** Milliseconds since the interrupt was raised. */
  ageMs: number;
  /** When a timer resolves it, if it has a deadline. */
  deadline: string | null;
  /** JSON Schema of the expected answer, if declared. */
  answerSchema: unknown;
}

/** Shapes a stored row for people. */
export function toListItem(row: StoredInterrupt, now = Date.now()): InterruptListItem {
  return {
    ...toPublicInterrupt(row),
    path: row.path,
    graph: row.graph,
    subAgentId: row.path.length > 1 ? `${row.graph}:${row.runId}` : null,
    ageMs: Math.max(0, now - Date.parse(row.createdAt)),
    // With a ladder the row's deadline is the next step; the deadline proper is its timeout.
    deadline: row.ladder ? row.ladder.timeoutAt : (row.deadline ?? null),
    answerSchema: row.answerSchema ?? null,
  };
}

/** A page of the approval queue; `total` when the query asked for a count. */
export interface InterruptListPage {
  items: InterruptListItem[];
  nextCursor: string | null;
  /** How many interrupts match the filters on all pages (with `count: true`). */
  total?: number;
}

/** A page of the approval queue, newest first, from the store's index. */
export async function listInterruptsForPeople(
  store: RuntimeStore,
  query: InterruptQuery,
): Promise<InterruptListPage> {
  const page = await requireCapability(store, "interruptQueue", "listInterrupts").listInterrupts({
    status: "pending",
    ...query,
  });
  const now = Date.now();
  return {
    items: page.items.map((row) => toListItem(row, now)),
    nextCursor: page.nextCursor,
    ...(page.total !== undefined ? { total: page.total } : {}),
  };
}
