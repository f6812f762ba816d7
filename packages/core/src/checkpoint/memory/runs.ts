/** Run and audit queries of {@link MemorySaver}: the ordered, paged reads. */
import type { ThreadId } from "../../ids.ts";
import type { AuditRecord } from "../../types.ts";
import {
  compareOldestFirst,
  decodeCursor,
  decodeSeqCursor,
  encodeCursor,
  pageLimit,
} from "../store-kit.ts";
import type { AuditQuery, RunQuery, RunRecord } from "../types.ts";
import type { MemoryTables, RunRow } from "./tables.ts";

/** Runs of a thread, oldest first. */
export function listRuns(db: MemoryTables, threadId: ThreadId): RunRecord[] {
  const rows: RunRow[] = [];
  for (const runId of db.threads.get(threadId)?.runs ?? []) {
    const row = db.runs.get(runId);
    if (row) rows.push(row);
  }
  return rows.sort(compareOldestFirst).map((row) => db.decode<RunRecord>(row.data));
}

/** Runs in one status across threads, least recently updated first, with a keyset cursor. */
export function listRunsByStatus(
  db: MemoryTables,
  query: RunQuery,
): { items: RunRecord[]; nextCursor: string | null } {
  const limit = pageLimit(query.limit);
  const after = decodeCursor(query.cursor);
  const key = ([runId, row]: [string, RunRow]): [string, string] => [row.updatedAt, runId];
  const rows = [...db.runs.entries()]
    .filter(([runId, row]) => {
      if (row.status !== query.status || (query.rootOnly && !row.root)) return false;
      return !after || compareKeys([row.updatedAt, runId], after) > 0;
    })
    .sort((a, b) => compareKeys(key(a), key(b)));
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page.map(([, row]) => db.decode<RunRecord>(row.data)),
    nextCursor: rows.length > limit && last ? encodeCursor(key(last)) : null,
  };
}

/** Audit records oldest first, by thread or by the tenant of their thread. */
export function listAudit(
  db: MemoryTables,
  query: AuditQuery,
): { items: AuditRecord[]; nextCursor: string | null } {
  const limit = pageLimit(query.limit);
  const after = decodeSeqCursor(query.cursor);
  const items: AuditRecord[] = [];
  let lastSeq = 0;
  for (const entry of db.audit) {
    if (entry.seq <= after) continue;
    if (query.threadId !== undefined && entry.threadId !== query.threadId) continue;
    if (query.tenant !== undefined) {
      const tenant = db.threads.get(entry.threadId)?.record?.tenant ?? null;
      if (tenant !== query.tenant) continue;
    }
    if (items.length === limit) return { items, nextCursor: String(lastSeq) };
    items.push(db.decode<AuditRecord>(entry.data));
    lastSeq = entry.seq;
  }
  return { items, nextCursor: null };
}

/** Ascending order of `[time, id]` keys. */
function compareKeys(a: readonly [string, string], b: readonly [string, string]): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
}
