/** Thread rows of {@link MemorySaver}: listing by keyset and deleting a thread with its rows. */
import { deleteThreadSideRecords } from "./side-records.ts";
import type { ThreadId } from "../../ids.ts";
import { keysetPage, pageLimit } from "../store-kit.ts";
import type { ThreadRecord } from "../types.ts";
import type { MemoryTables } from "./tables.ts";

/** Threads newest first (by `createdAt`, then id), optionally of one tenant. */
export function listThreads(
  db: MemoryTables,
  query: { tenant?: string | null; limit?: number; cursor?: string | null },
): { items: ThreadRecord[]; nextCursor: string | null } {
  const rows: { key: [string, string]; item: string }[] = [];
  for (const [threadId, { record }] of db.threads) {
    if (!record) continue;
    if (query.tenant !== undefined && record.tenant !== query.tenant) continue;
    rows.push({ key: [record.createdAt, threadId], item: record.data });
  }
  const page = keysetPage(rows, query.cursor, pageLimit(query.limit));
  return {
    items: page.items.map((data) => db.decode<ThreadRecord>(data)),
    nextCursor: page.nextCursor,
  };
}

/** Deletes the thread and every row under it; the lease row stays, expired. */
export function deleteThread(db: MemoryTables, threadId: ThreadId): void {
  const state = db.threads.get(threadId);
  if (state) {
    for (const id of state.runs) db.runs.delete(id);
    for (const id of state.requests) db.requests.delete(id);
    db.threads.delete(threadId);
  }
  db.interrupts.deleteThread(threadId);
  deleteThreadSideRecords(db, threadId);
  // The token must keep growing if the thread is made again.
  const lease = db.leases.get(threadId);
  if (lease) lease.expiresAt = 0;
  db.auditHeads.delete(threadId);
  db.auditSeals.delete(threadId);
  for (let i = db.audit.length - 1; i >= 0; i -= 1) {
    if (db.audit[i]?.threadId === threadId) db.audit.splice(i, 1);
  }
}
