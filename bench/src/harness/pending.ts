/**
 * Every pending interrupt of a Rein thread. A run result carries the oldest page of them (and
 * `pendingCount`); a scenario that answers all of them by id pages the rest from the queue.
 */
import type { Interrupt } from "@rein/core";

/** Anything with Rein's approval-queue query (a compiled graph). */
interface InterruptQueue {
  listInterrupts(query: {
    threadId?: string;
    status?: "pending";
    cursor?: string | null;
    limit?: number;
  }): Promise<{ items: Interrupt[]; nextCursor: string | null }>;
}

/** All pending interrupts of `threadId`, read page by page (not timed by the scenarios). */
export async function allPending(graph: InterruptQueue, threadId: string): Promise<Interrupt[]> {
  const all: Interrupt[] = [];
  let cursor: string | null = null;
  do {
    const page = await graph.listInterrupts({ threadId, status: "pending", cursor, limit: 500 });
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}
