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
import type pg from "pg";
import { checked, guarded } from "./connection.ts";
import type { Named, Statements } from "./statements.ts";

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
  readonly #pool: pg.Pool;
  readonly #s: string;
  readonly #sql: Statements;
  readonly #serializer: Serializer;

  constructor(pool: pg.Pool, s: string, sql: Statements, serializer: Serializer) {
    this.#pool = pool;
    this.#s = s;
    this.#sql = sql;
    this.#serializer = serializer;
  }

  /** Rows of one statement, driver errors typed (as the saver's). */
  #rows<Row extends pg.QueryResultRow>(statement: Named, values: unknown[]): Promise<Row[]> {
    return guarded(async () => (await this.#pool.query<Row>(checked(statement, values))).rows);
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

  async legacyUntil(): Promise<number> {
    const rows = await this.#rows<{ value: string }>(this.#sql.auditLegacyUntil, []);
    return rows[0] === undefined ? 0 : Number(rows[0].value);
  }
}

/**
 * Migration 12: facts about the store itself, one row each. The first is where the audit chain
 * began: the sequence number of the newest line written before it. A schema created with the
 * chain records 0, so a line whose chain fields were erased is never taken for one older than the
 * chain (docs/audit.md). A schema upgraded from before the chain keeps its unchained lines legacy.
 */
export const auditLegacyUntilMigration = (s: string): string => `
  CREATE TABLE ${s}.store_settings (
    key   text PRIMARY KEY,
    value text NOT NULL
  );
  INSERT INTO ${s}.store_settings (key, value) VALUES ('audit_legacy_until', coalesce(
    (SELECT min(seq) - 1 FROM ${s}.audit WHERE n IS NOT NULL),
    (SELECT max(seq) FROM ${s}.audit),
    0)::text);
`;

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

/**
 * Migration 8: the audit log's hash chain, one per thread (see docs/audit.md). A BEFORE INSERT
 * trigger links every new line, whichever statement inserts it (the answer and commit functions,
 * appendAudit), so no writer can forget to. It locks the thread's row in `audit_heads` first:
 * concurrent writers of one thread (a steer without the lease, say) take positions one after the
 * other, and the line's sequence number is drawn under that lock so append order and chain order
 * agree. The hashed text is `auditEntryHash`'s, byte for byte. Lines written before stay
 * unchained (reported as legacy); `audit_seals` holds each chain's signed head.
 */
export const auditChainMigration = (s: string, KEY: string): string => `
  ALTER TABLE ${s}.audit ADD COLUMN n bigint, ADD COLUMN prev_hash text, ADD COLUMN hash text;
  CREATE TABLE ${s}.audit_heads (
    thread_id ${KEY} PRIMARY KEY,
    n         bigint NOT NULL,
    hash      text NOT NULL
  );
  CREATE TABLE ${s}.audit_seals (
    thread_id ${KEY} PRIMARY KEY,
    n         bigint NOT NULL,
    hash      text NOT NULL,
    mac       text NOT NULL,
    sealed_at text NOT NULL
  );
  CREATE FUNCTION ${s}.audit_chain() RETURNS trigger LANGUAGE plpgsql AS $fn$
  DECLARE head record;
  BEGIN
    INSERT INTO ${s}.audit_heads (thread_id, n, hash) VALUES (NEW.thread_id, 0, '')
    ON CONFLICT (thread_id) DO NOTHING;
    SELECT n, hash INTO head FROM ${s}.audit_heads WHERE thread_id = NEW.thread_id FOR UPDATE;
    NEW.seq := nextval(pg_get_serial_sequence('${s}.audit', 'seq'));
    NEW.n := head.n + 1;
    NEW.prev_hash := head.hash;
    NEW.hash := encode(sha256(convert_to(
      'rein.audit.v1' || chr(10) || octet_length(convert_to(NEW.thread_id, 'UTF8')) || ':'
        || NEW.thread_id || chr(10) || NEW.n || chr(10) || NEW.prev_hash || chr(10) || NEW.record,
      'UTF8')), 'hex');
    UPDATE ${s}.audit_heads SET n = NEW.n, hash = NEW.hash WHERE thread_id = NEW.thread_id;
    RETURN NEW;
  END $fn$;
  CREATE TRIGGER audit_chain BEFORE INSERT ON ${s}.audit
    FOR EACH ROW EXECUTE FUNCTION ${s}.audit_chain();
`;
