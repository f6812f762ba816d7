/**
 * The list queries, whose WHERE clause depends on the filters given. Each distinct filter shape
 * is built and prepared once, then reused. Pagination is keyset (never OFFSET), so a page costs
 * an index seek whatever its depth.
 */
import type Database from "better-sqlite3";
import type { AuditQuery, InterruptQuery } from "@rein/core/store";
import { INTERRUPT_COLUMNS, type InterruptRow } from "./statements.ts";

type Params = Record<string, string | number | null>;

/** A statement plus the parameters to bind for one call. */
interface Query<Row> {
  statement: Database.Statement<[Params], Row>;
  params: Params;
}

/** Builds and caches the list statements of one connection. */
export class ListQueries {
  readonly #db: Database.Database;
  readonly #cache = new Map<string, Database.Statement<[Params], unknown>>();

  constructor(db: Database.Database) {
    this.#db = db;
  }

  #prepare<Row>(sql: string): Database.Statement<[Params], Row> {
    let statement = this.#cache.get(sql);
    if (!statement) {
      statement = this.#db.prepare<[Params], unknown>(sql);
      this.#cache.set(sql, statement);
    }
    return statement as Database.Statement<[Params], Row>;
  }

  /** Threads newest first after the cursor key, `limit + 1` rows to tell if there is more. */
  threads(
    tenant: string | null | undefined,
    after: [string, string] | null,
    limit: number,
  ): Query<{
    thread_id: string;
    tenant: string | null;
    created_at: string;
    updated_at: string;
    metadata: string;
  }> {
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
    const sql = `SELECT thread_id, tenant, created_at, updated_at, metadata FROM threads
      ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY created_at DESC, thread_id DESC LIMIT @limit`;
    return { statement: this.#prepare(sql), params };
  }

  /** Interrupts newest first after the cursor key, `limit + 1` rows. */
  interrupts(
    query: InterruptQuery,
    after: [string, string] | null,
    limit: number,
  ): Query<InterruptRow & { id: string; created_at: string }> {
    const where: string[] = [];
    const params: Params = { limit: limit + 1 };
    const filter = (column: string, value: string | null | undefined, op = "=") => {
      if (value === undefined) return;
      where.push(`${column} ${op} @${column}`);
      params[column] = value;
    };
    filter("status", query.status);
    filter("thread_id", query.threadId);
    filter("graph", query.graph);
    filter("tenant", query.tenant, "IS");
    filter("run_id", query.runId);
    if (after) {
      where.push("(created_at, id) < (@after_at, @after_id)");
      params["after_at"] = after[0];
      params["after_id"] = after[1];
    }
    const sql = `SELECT id, created_at, ${INTERRUPT_COLUMNS} FROM interrupts
      ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY created_at DESC, id DESC LIMIT @limit`;
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
