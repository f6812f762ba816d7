/**
 * The audit log's hash chains in SQLite: the one place a line is appended (at the end of its
 * thread's chain) and the verifier's view of the chains and their signed heads.
 */
import type { DatabaseSync } from "node:sqlite";
import type { ThreadId } from "@rein/core";
import {
  auditEntryHash,
  auditRecordId,
  decodeChainCursor,
  encodeChainCursor,
  keysetSlice,
  pageLimit,
  type AuditChainEntry,
  type AuditChainQuery,
  type AuditChainSource,
  type AuditSeal,
} from "@rein/core/store";
import type { Serializer } from "@rein/core";
import { settle } from "./errors.ts";
import type { Statements, Stmt } from "./statements.ts";

/**
 * Appends an encoded audit record at the end of its thread's chain. Call inside a write
 * transaction (`BEGIN IMMEDIATE`): the head read and the insert must not interleave with
 * another writer's, or two lines would take one position.
 */
export function appendAuditLine(sql: Statements, threadId: string, text: string): void {
  const head = sql.auditHead.get(threadId);
  const n = (head?.n ?? 0) + 1;
  const prev = head?.hash ?? "";
  sql.insertAudit.run(threadId, text, n, prev, auditEntryHash(threadId, n, prev, text));
}

type Params = Record<string, string | number | null>;

interface ChainRow {
  seq: number;
  thread_id: string;
  n: number | null;
  prev_hash: string | null;
  hash: string | null;
  record: string;
}

/** The WHERE clause of a chain scope: the thread, then the tenant of the line's thread. */
function scopeFilter(
  alias: string,
  scope: Pick<AuditChainQuery, "threadId" | "tenant">,
): { join: string; where: string[]; params: Params } {
  const where: string[] = [];
  const params: Params = {};
  if (scope.threadId !== undefined) {
    where.push(`${alias}.thread_id = @thread`);
    params["thread"] = scope.threadId;
  }
  if (scope.tenant === undefined) return { join: "", where, params };
  // The tenant is the thread's; lines of threads never created count as tenant-less.
  where.push("t.tenant IS @tenant");
  params["tenant"] = scope.tenant;
  return { join: `LEFT JOIN threads t ON t.thread_id = ${alias}.thread_id`, where, params };
}

/** Chain pages and signed heads of one connection; statements prepared once per shape. */
export class AuditChains implements AuditChainSource {
  readonly #db: DatabaseSync;
  readonly #sql: Statements;
  readonly #serializer: Serializer;
  readonly #cache = new Map<string, Stmt<[Params], unknown>>();

  constructor(db: DatabaseSync, sql: Statements, serializer: Serializer) {
    this.#db = db;
    this.#sql = sql;
    this.#serializer = serializer;
  }

  #prepare<Row>(text: string): Stmt<[Params], Row> {
    let statement = this.#cache.get(text);
    if (!statement) {
      statement = this.#db.prepare(text);
      this.#cache.set(text, statement);
    }
    return statement as Stmt<[Params], Row>;
  }

  /** One page of lines by thread, then sequence (see `AuditChainStore.listAuditChain`). */
  page(query: AuditChainQuery): { items: AuditChainEntry[]; nextCursor: string | null } {
    const limit = pageLimit(query.limit);
    const after = decodeChainCursor(query.cursor);
    const { join, where, params } = scopeFilter("a", query);
    params["limit"] = limit + 1;
    if (after) {
      where.push("(a.thread_id, a.seq) > (@after_thread, @after_seq)");
      params["after_thread"] = after[0];
      params["after_seq"] = after[1];
    }
    const text = `SELECT a.seq, a.thread_id, a.n, a.prev_hash, a.hash, a.record FROM audit a ${join}
      ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY a.thread_id, a.seq LIMIT @limit`;
    const rows = this.#prepare<ChainRow>(text).all(params);
    const page = keysetSlice(rows, limit, (row) =>
      encodeChainCursor({ threadId: row.thread_id as ThreadId, seq: row.seq }),
    );
    return { items: page.rows.map(chainEntry), nextCursor: page.nextCursor };
  }

  listAuditChain(
    query: AuditChainQuery,
  ): Promise<{ items: AuditChainEntry[]; nextCursor: string | null }> {
    return settle(() => this.page(query));
  }

  listSeals(scope: Pick<AuditChainQuery, "threadId" | "tenant">): Promise<AuditSeal[]> {
    return settle(() => {
      const { join, where, params } = scopeFilter("s", scope);
      const text = `SELECT s.thread_id, s.n, s.hash, s.mac, s.sealed_at FROM audit_seals s ${join}
        ${where.length ? `WHERE ${where.join(" AND ")}` : ""}`;
      const rows = this.#prepare<{
        thread_id: string;
        n: number;
        hash: string;
        mac: string;
        sealed_at: string;
      }>(text).all(params);
      return rows.map((row) => ({
        threadId: row.thread_id as ThreadId,
        n: row.n,
        hash: row.hash,
        mac: row.mac,
        sealedAt: row.sealed_at,
      }));
    });
  }

  putSeals(seals: readonly AuditSeal[]): Promise<void> {
    return settle(() => {
      for (const s of seals)
        this.#sql.upsertAuditSeal.run(s.threadId, s.n, s.hash, s.mac, s.sealedAt);
    });
  }

  decodeId(content: string): string | null {
    return auditRecordId(this.#serializer, content);
  }

  legacyUntil(): Promise<number> {
    return settle(() => {
      const row = this.#prepare<{ value: string }>(
        "SELECT value FROM store_settings WHERE key = 'audit_legacy_until'",
      ).get({});
      return row === undefined ? 0 : Number(row.value);
    });
  }
}

/** A chain row as the verifier reads it. */
function chainEntry(row: ChainRow): AuditChainEntry {
  return {
    seq: row.seq,
    threadId: row.thread_id as ThreadId,
    n: row.n,
    prevHash: row.prev_hash === "" ? null : row.prev_hash,
    hash: row.hash,
    content: row.record,
  };
}
