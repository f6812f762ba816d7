/**
 * The verifier's view of the Postgres store's audit chains: chain pages and signed heads. Lines
 * are linked by the `audit_chain` trigger (migration 8) as they are inserted, whichever statement
 * inserts them.
 */
import type { Serializer, ThreadId } from "@rein/core";
import {
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
import { auditChainQuery, auditSealsQuery } from "./queries.ts";
import type { Named, Statements } from "./statements.ts";

/** Runs a named statement and returns its rows (the saver's, with its error mapping). */
type Rows = <Row extends Record<string, unknown>>(
  statement: Named,
  values: unknown[],
) => Promise<Row[]>;

interface ChainRow {
  [column: string]: unknown;
  seq: string;
  thread_id: string;
  n: string | null;
  prev_hash: string | null;
  hash: string | null;
  record: string;
}

interface SealRow {
  [column: string]: unknown;
  thread_id: string;
  n: string;
  hash: string;
  mac: string;
  sealed_at: string;
}

/** Chain pages and signed heads of one schema. */
export class AuditChains implements AuditChainSource {
  readonly #s: string;
  readonly #sql: Statements;
  readonly #rows: Rows;
  readonly #serializer: Serializer;

  constructor(s: string, sql: Statements, rows: Rows, serializer: Serializer) {
    this.#s = s;
    this.#sql = sql;
    this.#rows = rows;
    this.#serializer = serializer;
  }

  async listAuditChain(
    query: AuditChainQuery,
  ): Promise<{ items: AuditChainEntry[]; nextCursor: string | null }> {
    const limit = pageLimit(query.limit);
    const q = auditChainQuery(this.#s, query, decodeChainCursor(query.cursor), limit);
    const rows = await this.#rows<ChainRow>(q, q.values);
    const page = keysetSlice(rows, limit, (row) =>
      encodeChainCursor({ threadId: row.thread_id as ThreadId, seq: Number(row.seq) }),
    );
    return { items: page.rows.map(chainEntry), nextCursor: page.nextCursor };
  }

  async listSeals(scope: Pick<AuditChainQuery, "threadId" | "tenant">): Promise<AuditSeal[]> {
    const q = auditSealsQuery(this.#s, scope);
    const rows = await this.#rows<SealRow>(q, q.values);
    return rows.map((row) => ({
      threadId: row.thread_id as ThreadId,
      n: Number(row.n),
      hash: row.hash,
      mac: row.mac,
      sealedAt: row.sealed_at,
    }));
  }

  async putSeals(seals: readonly AuditSeal[]): Promise<void> {
    await this.#rows(this.#sql.upsertAuditSeals, [
      seals.map((s) => s.threadId),
      seals.map((s) => s.n),
      seals.map((s) => s.hash),
      seals.map((s) => s.mac),
      seals.map((s) => s.sealedAt),
    ]);
  }

  decodeId(content: string): string | null {
    return auditRecordId(this.#serializer, content);
  }
}

/** A chain row as the verifier reads it (bigints arrive as strings). */
function chainEntry(row: ChainRow): AuditChainEntry {
  return {
    seq: Number(row.seq),
    threadId: row.thread_id as ThreadId,
    n: row.n === null ? null : Number(row.n),
    prevHash: row.prev_hash === "" ? null : row.prev_hash,
    hash: row.hash,
    content: row.record,
  };
}
