/**
 * The list queries, whose WHERE clause depends on the filters given. Each distinct filter shape
 * is built and prepared once, then reused. Pagination is keyset (never OFFSET), so a page costs
 * an index seek whatever its depth.
 */
import type { DatabaseSync } from "node:sqlite";
import type { AuditRecord } from "@rein/core";
import {
  decodeCursor,
  decodeSeqCursor,
  encodeCursor,
  keysetSlice,
  pageLimit,
  type AuditQuery,
  type InterruptPage,
  type InterruptQuery,
  type RunQuery,
  type RunRecord,
  type ThreadRecord,
} from "@rein/core/store";
import type { RowCodec } from "./codec.ts";
import {
  INTERRUPT_COLUMNS,
  RUN_COLUMNS,
  type InterruptRow,
  type RunRow,
  type Stmt,
  type ThreadRow,
} from "./statements.ts";

type Params = Record<string, string | number | null>;

/** One keyset page of records. */
interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** A statement plus the parameters to bind for one call. */
interface Query<Row> {
  statement: Stmt<[Params], Row>;
  params: Params;
}

/** Builds and caches the list statements of one connection, and turns their rows into pages. */
export class ListQueries {
  readonly #db: DatabaseSync;
  readonly #codec: RowCodec;
  readonly #cache = new Map<string, Stmt<[Params], unknown>>();

  constructor(db: DatabaseSync, codec: RowCodec) {
    this.#db = db;
    this.#codec = codec;
  }

  /** One page of threads (see {@link ThreadCatalogStore.listThreads}). */
  threadsPage(query: {
    tenant?: string | null;
    limit?: number;
    cursor?: string | null;
  }): Page<ThreadRecord> {
    const limit = pageLimit(query.limit);
    const { statement, params } = this.threads(query.tenant, decodeCursor(query.cursor), limit);
    const page = keysetSlice(statement.all(params), limit, (row) =>
      encodeCursor([row.created_at, row.thread_id]),
    );
    return { items: page.rows.map((row) => this.#codec.thread(row)), nextCursor: page.nextCursor };
  }

  /** One page of interrupts (see {@link InterruptStore.listInterrupts}). */
  interruptsPage(query: InterruptQuery): InterruptPage {
    const limit = pageLimit(query.limit);
    const { statement, params } = this.interrupts(query, decodeCursor(query.cursor), limit);
    const page = keysetSlice(statement.all(params), limit, (row) =>
      encodeCursor([row.created_at, row.id]),
    );
    const counted = query.count === true ? this.interruptCount(query) : null;
    return {
      items: page.rows.map((row) => this.#codec.interrupt(row)),
      nextCursor: page.nextCursor,
      ...(counted ? { total: counted.statement.get(counted.params)?.total ?? 0 } : {}),
    };
  }

  /** One page of runs in one status (see {@link RunStore.listRunsByStatus}). */
  runsPage(query: RunQuery): Page<RunRecord> {
    const limit = pageLimit(query.limit);
    const [afterAt, afterId] = decodeCursor(query.cursor) ?? ["", ""];
    const statement = this.#prepare<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM runs INDEXED BY runs_by_status
       WHERE status = @status AND (@rootOnly = 0 OR root = 1)
         AND (updated_at, run_id) > (@afterAt, @afterId)
       ORDER BY updated_at, run_id LIMIT @limit`,
    );
    const rows = statement.all({
      status: query.status,
      rootOnly: query.rootOnly ? 1 : 0,
      afterAt,
      afterId,
      limit: limit + 1,
    });
    const page = keysetSlice(rows, limit, (row) => encodeCursor([row.updated_at, row.run_id]));
    const items = page.rows.map((row) => this.#codec.run(row));
    return { items, nextCursor: page.nextCursor };
  }

  /** One page of audit lines (see {@link AuditChainStore.listAudit}). */
  auditPage(query: AuditQuery): Page<AuditRecord> {
    const limit = pageLimit(query.limit);
    const { statement, params } = this.audit(query, decodeSeqCursor(query.cursor), limit);
    const page = keysetSlice(statement.all(params), limit, (row) => String(row.seq));
    const items = page.rows.map((row) => this.#codec.decode<AuditRecord>(row.record));
    return { items, nextCursor: page.nextCursor };
  }

  #prepare<Row>(sql: string): Stmt<[Params], Row> {
    let statement = this.#cache.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#cache.set(sql, statement);
    }
    return statement as Stmt<[Params], Row>;
  }

  /** Threads newest first after the cursor key, `limit + 1` rows to tell if there is more. */
  threads(
    tenant: string | null | undefined,
    after: [string, string] | null,
    limit: number,
  ): Query<ThreadRow> {
    const where: string[] = [];
    const params: Params = { limit: limit + 1 };
    if (tenant !== undefined) {
      where.push("tenant IS @tenant");
      params["tenant"] = tenant;
    }
    if (after) {
      where.push("(created_at, thread_id) < (@after_at, @after_id)");
      params["after_at"] = after[0];
      params["after_id"] = after[1];
    }
    const sql = `SELECT thread_id, tenant, created_at, updated_at, metadata, graph FROM threads
      ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY created_at DESC, thread_id DESC LIMIT @limit`;
    return { statement: this.#prepare(sql), params };
  }

  /** Interrupts newest first after the cursor key, `limit + 1` rows. */
  interrupts(
    query: InterruptQuery,
    after: [string, string] | null,
    limit: number,
  ): Query<InterruptRow> {
    const { where, params } = interruptFilters(query);
    params["limit"] = limit + 1;
    if (after) {
      where.push("(created_at, id) < (@after_at, @after_id)");
      params["after_at"] = after[0];
      params["after_id"] = after[1];
    }
    const sql = `SELECT ${INTERRUPT_COLUMNS} FROM interrupts
      ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY created_at DESC, id DESC LIMIT @limit`;
    return { statement: this.#prepare(sql), params };
  }

  /** How many interrupts the filters match, from the index that serves their page. */
  interruptCount(query: InterruptQuery): Query<{ total: number }> {
    const { where, params } = interruptFilters(query);
    const sql = `SELECT count(*) AS total FROM interrupts
      ${where.length ? `WHERE ${where.join(" AND ")}` : ""}`;
    return { statement: this.#prepare(sql), params };
  }

  /** Audit records oldest first after sequence `after`, `limit + 1` rows. */
  audit(query: AuditQuery, after: number, limit: number): Query<{ seq: number; record: string }> {
    const where = ["a.seq > @after"];
    const params: Params = { after, limit: limit + 1 };
    if (query.threadId !== undefined) {
      where.push("a.thread_id = @thread");
      params["thread"] = query.threadId;
    }
    let join = "";
    if (query.tenant !== undefined) {
      // The tenant is the thread's; audit lines of threads never created count as tenant-less.
      join = "LEFT JOIN threads t ON t.thread_id = a.thread_id";
      where.push("t.tenant IS @tenant");
      params["tenant"] = query.tenant;
    }
    const sql = `SELECT a.seq, a.record FROM audit a ${join}
      WHERE ${where.join(" AND ")} ORDER BY a.seq LIMIT @limit`;
    return { statement: this.#prepare(sql), params };
  }
}

/** The WHERE clauses of the queue's filters (the cursor aside) and their parameters. */
function interruptFilters(query: InterruptQuery): { where: string[]; params: Params } {
  const where: string[] = [];
  const params: Params = {};
  const filter = (column: string, value: string | null | undefined, op = "=") => {
    if (value === undefined) return;
    where.push(`${column} ${op} @${column}`);
    params[column] = value;
  };
  filter("status", query.status);
  filter("thread_id", query.threadId);
  filter("root_graph", query.graph);
  filter("graph", query.subAgentGraph);
  filter("tenant", query.tenant, "IS");
  filter("run_id", query.runId);
  return { where, params };
}
