/**
 * The list queries, whose WHERE clause depends on the filters given. Pagination is keyset on
 * `(created_at, id)` (a row comparison the btree index serves directly), never OFFSET, so a page
 * costs an index seek whatever its depth.
 */
import { createHash } from "node:crypto";
import type { AuditChainQuery, AuditQuery, InterruptQuery } from "@rein/core/store";
import { INTERRUPT_COLUMNS, type Named } from "./statements.ts";

/** A named query with its values. */
export interface Query extends Named {
  values: unknown[];
}

/** Names a dynamic query by its text, so each filter shape is prepared once per connection. */
function named(text: string, values: unknown[]): Query {
  const name = `rein_q_${createHash("sha256").update(text).digest("hex").slice(0, 16)}`;
  return { name, text, values };
}

/** Builds the WHERE clause from the filters present, numbering parameters as it goes. */
class Where {
  readonly clauses: string[] = [];
  readonly values: unknown[] = [];

  add(sql: (param: (value: unknown) => string) => string): void {
    this.clauses.push(sql((value) => `$${this.values.push(value)}`));
  }

  /** A parameter outside the WHERE clause (the LIMIT: one prepared statement for any size). */
  param(value: unknown): string {
    return `$${this.values.push(value)}`;
  }

  toString(): string {
    return this.clauses.length ? `WHERE ${this.clauses.join(" AND ")}` : "";
  }
}

/** Threads newest first after the cursor key, `limit + 1` rows to tell if there is more. */
export function threadsQuery(
  s: string,
  tenant: string | null | undefined,
  after: [string, string] | null,
  limit: number,
): Query {
  const where = new Where();
  if (tenant === null) where.add(() => "tenant IS NULL");
  else if (tenant !== undefined) where.add((p) => `tenant = ${p(tenant)}`);
  if (after) where.add((p) => `(created_at, thread_id) < (${p(after[0])}, ${p(after[1])})`);
  const text = `SELECT thread_id, tenant, created_at, updated_at, metadata, graph FROM ${s}.threads
    ${where.toString()} ORDER BY created_at DESC, thread_id DESC LIMIT ${where.param(limit + 1)}`;
  return named(text, where.values);
}

/** Interrupts newest first after the cursor key, `limit + 1` rows. */
export function interruptsQuery(
  s: string,
  query: InterruptQuery,
  after: [string, string] | null,
  limit: number,
): Query {
  const where = interruptFilters(query);
  if (after) where.add((p) => `(created_at, id) < (${p(after[0])}, ${p(after[1])})`);
  const text = `SELECT ${INTERRUPT_COLUMNS} FROM ${s}.interrupts
    ${where.toString()} ORDER BY created_at DESC, id DESC LIMIT ${where.param(limit + 1)}`;
  return named(text, where.values);
}

/** How many interrupts the filters match (the cursor aside), from the index of their page. */
export function interruptCountQuery(s: string, query: InterruptQuery): Query {
  const where = interruptFilters(query);
  return named(
    `SELECT count(*)::int AS total FROM ${s}.interrupts ${where.toString()}`,
    where.values,
  );
}

/** The WHERE clause of the queue's filters. */
function interruptFilters(query: InterruptQuery): Where {
  const where = new Where();
  const equals = (column: string, value: string | undefined) => {
    if (value !== undefined) where.add((p) => `${column} = ${p(value)}`);
  };
  // Pending as a literal: the queue's indexes hold only pending rows (migration 15), and a
  // parameter would keep the planner from proving a plan's rows meet their predicate.
  if (query.status === "pending") where.add(() => "status = 'pending'");
  else equals("status", query.status);
  equals("thread_id", query.threadId);
  equals("root_graph", query.graph);
  equals("graph", query.subAgentGraph);
  if (query.tenant === null) where.add(() => "tenant IS NULL");
  else equals("tenant", query.tenant);
  equals("run_id", query.runId);
  return where;
}

/** Audit records oldest first after sequence `after`, `limit + 1` rows. */
export function auditQuery(s: string, query: AuditQuery, after: number, limit: number): Query {
  const where = new Where();
  where.add((p) => `a.seq > ${p(after)}`);
  if (query.threadId !== undefined) where.add((p) => `a.thread_id = ${p(query.threadId)}`);
  let join = "";
  if (query.tenant !== undefined) {
    // The tenant is the thread's; audit lines of threads never created count as tenant-less.
    join = `LEFT JOIN ${s}.threads t ON t.thread_id = a.thread_id`;
    if (query.tenant === null) where.add(() => "t.tenant IS NULL");
    else where.add((p) => `t.tenant = ${p(query.tenant)}`);
  }
  const text = `SELECT a.seq, a.record FROM ${s}.audit a ${join}
    ${where.toString()} ORDER BY a.seq LIMIT ${where.param(limit + 1)}`;
  return named(text, where.values);
}

/** The scope of a chain page or of signed heads: the thread, then the tenant of the thread. */
function chainScope(
  s: string,
  alias: string,
  where: Where,
  scope: { threadId?: string | undefined; tenant?: string | null | undefined },
): string {
  if (scope.threadId !== undefined) where.add((p) => `${alias}.thread_id = ${p(scope.threadId)}`);
  if (scope.tenant === undefined) return "";
  // The tenant is the thread's; lines of threads never created count as tenant-less.
  if (scope.tenant === null) where.add(() => "t.tenant IS NULL");
  else where.add((p) => `t.tenant = ${p(scope.tenant)}`);
  return `LEFT JOIN ${s}.threads t ON t.thread_id = ${alias}.thread_id`;
}

/** Audit lines with their chain links by thread, then sequence, after a cursor; `limit + 1`. */
export function auditChainQuery(
  s: string,
  query: AuditChainQuery,
  after: [string, number] | null,
  limit: number,
): Query {
  const where = new Where();
  const join = chainScope(s, "a", where, query);
  if (after) where.add((p) => `(a.thread_id, a.seq) > (${p(after[0])}, ${p(after[1])})`);
  const text = `SELECT a.seq, a.thread_id, a.n, a.prev_hash, a.hash, a.record FROM ${s}.audit a
    ${join} ${where.toString()} ORDER BY a.thread_id, a.seq LIMIT ${where.param(limit + 1)}`;
  return named(text, where.values);
}

/** The signed heads of the chains in scope. */
export function auditSealsQuery(
  s: string,
  scope: { threadId?: string | undefined; tenant?: string | null | undefined },
): Query {
  const where = new Where();
  const join = chainScope(s, "x", where, scope);
  const text = `SELECT x.thread_id, x.n, x.hash, x.mac, x.sealed_at FROM ${s}.audit_seals x
    ${join} ${where.toString()}`;
  return named(text, where.values);
}
