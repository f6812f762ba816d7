/** The audit log's hash chains in {@link MemorySaver}: append, chain pages, signed heads. */
import type { ThreadId } from "../../ids.ts";
import {
  auditRecordId,
  decodeChainCursor,
  encodeChainCursor,
  type AuditChainSource,
} from "../audit-chain.ts";
import { pageLimit } from "../store-kit.ts";
import type { AuditChainEntry, AuditChainQuery, AuditSeal } from "../types.ts";
import type { MemoryTables } from "./tables.ts";

/** Whether `threadId` is in the scope of `query` (thread, then the thread's tenant). */
function inScope(db: MemoryTables, threadId: ThreadId, query: AuditChainQuery): boolean {
  if (query.threadId !== undefined && threadId !== query.threadId) return false;
  if (query.tenant === undefined) return true;
  return (db.threads.get(threadId)?.record?.tenant ?? null) === query.tenant;
}

/** Audit lines with their links, by thread then sequence (see `AuditChainStore.listAuditChain`). */
export function listAuditChain(
  db: MemoryTables,
  query: AuditChainQuery,
): { items: AuditChainEntry[]; nextCursor: string | null } {
  const limit = pageLimit(query.limit);
  const after = decodeChainCursor(query.cursor);
  const rows = db.audit
    .filter((row) => inScope(db, row.threadId, query))
    .filter(
      (row) =>
        !after || row.threadId > after[0] || (row.threadId === after[0] && row.seq > after[1]),
    )
    .sort((a, b) =>
      a.threadId !== b.threadId ? (a.threadId < b.threadId ? -1 : 1) : a.seq - b.seq,
    );
  const items = rows.slice(0, limit).map((row): AuditChainEntry => ({
    seq: row.seq,
    threadId: row.threadId,
    n: row.n,
    prevHash: row.prevHash === "" ? null : row.prevHash,
    hash: row.hash,
    content: row.data,
  }));
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? encodeChainCursor(last) : null };
}

/** The verifier's view of the memory tables. */
export function auditSource(db: MemoryTables): AuditChainSource {
  return {
    listAuditChain: (query) => Promise.resolve(listAuditChain(db, query)),
    listSeals: (scope) =>
      Promise.resolve([...db.auditSeals.values()].filter((s) => inScope(db, s.threadId, scope))),
    putSeals: (seals: readonly AuditSeal[]) => {
      for (const seal of seals) db.auditSeals.set(seal.threadId, seal);
      return Promise.resolve();
    },
    decodeId: (content) => auditRecordId(db.serializer, content),
    // The memory store chains every line it has ever held.
    legacyUntil: () => Promise.resolve(0),
  };
}
