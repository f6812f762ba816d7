/**
 * SQL fragments several statements of the Postgres store share: the interrupt upsert, the
 * fence check and the run upsert tail.
 */
/** A named statement: `name` is unique per schema, as prepared statements are per connection. */
export interface Named {
  name: string;
  text: string;
}

/** Columns of an interrupt upsert, in the order of the `unnest` arrays that feed it. */
const INTERRUPT_INSERT = `INSERT INTO %s.interrupts AS i
  (id, thread_id, run_id, task_id, graph, tenant, status, created_at, deadline, answer,
   answered_by, answered_at, record, root_graph%PCOL)
SELECT * FROM unnest(%1::text[], %2::text[], %3::text[], %4::text[], %5::text[], %6::text[],
  %7::text[], %8::text[], %9::text[], %10::text[], %11::text[], %12::text[], %13::text[],
  %ROOT::text[]%PARR)
WHERE %COND
ON CONFLICT (id) DO UPDATE SET
  thread_id = EXCLUDED.thread_id, run_id = EXCLUDED.run_id, task_id = EXCLUDED.task_id,
  graph = EXCLUDED.graph, root_graph = EXCLUDED.root_graph,
  tenant = EXCLUDED.tenant, status = EXCLUDED.status, created_at = EXCLUDED.created_at,
  %DEADLINE, answer = EXCLUDED.answer, answered_by = EXCLUDED.answered_by,
  answered_at = EXCLUDED.answered_at, %RECORD%PSET
WHERE i.status = 'pending'`;

/**
 * From migration 10: once the timer took a ladder step (`stage`), a question raised again keeps
 * its ladder (the record), its next step (the deadline) and its policy (widened by escalation).
 */
const KEEP = (column: string): string =>
  `${column} = CASE WHEN i.stage IS NULL THEN EXCLUDED.${column} ELSE i.${column} END`;

/**
 * The interrupt upsert with its arrays at parameters `$first`..`$first+12`, the root graphs
 * (a column added later, so its array is the statement's last parameter) at `$root` and, when
 * given, the approval policies (migration 7) at `policy`. The approvals column is never
 * written here: a question raised again keeps the approvals it gathered. With `ladder`
 * (migration 10) it also keeps the ladder step it reached.
 */
export function interruptUpsert(
  s: string,
  first: number,
  root: number,
  condition: string,
  policy?: string,
  ladder = false,
): string {
  const set = (column: string) => (ladder ? KEEP(column) : `${column} = EXCLUDED.${column}`);
  return INTERRUPT_INSERT.replace("%s", s)
    .replace("%DEADLINE", set("deadline"))
    .replace("%RECORD", set("record"))
    .replace("%ROOT", `$${root}`)
    .replace("%PCOL", policy === undefined ? "" : ", policy")
    .replace("%PARR", policy === undefined ? "" : `, ${policy}::text[]`)
    .replace("%PSET", policy === undefined ? "" : `, ${set("policy")}`)
    .replace(/%(\d+)/g, (_, n: string) => `$${first + Number(n) - 1}`)
    .replace("%COND", condition);
}

/**
 * The lease row of thread `$1`, share-locked, when the write carries a fencing token in
 * `$token`: a concurrent `acquireLease` waits for this statement, and this statement sees the
 * token of any acquisition that committed before it (so a stale holder writes nothing).
 */
export function fenceCte(s: string, token: number, thread = 1): string {
  return `fence AS (
    SELECT token FROM ${s}.leases
    WHERE $${token}::bigint IS NOT NULL AND thread_id = $${thread} FOR SHARE
  )`;
}

/**
 * One write statement made fence-aware in the same round trip: `write` (whose own WHERE must
 * include {@link fenceOk}) runs inside a CTE beside the lease lock, and the statement returns the
 * thread's current token so the caller can tell a refused fence from a write that matched
 * nothing. `$token` is the fencing token (NULL: unfenced), `$thread` the thread id.
 */
export function fencedWrite(s: string, token: number, thread: number, write: string): string {
  return `WITH ${fenceCte(s, token, thread)}, w AS (${write})
    SELECT (SELECT token FROM fence) AS current_token`;
}

/** True when the write carries no fencing token, or carries the current one. */
export function fenceOk(token: number): string {
  return `($${token}::bigint IS NULL OR EXISTS (SELECT 1 FROM fence WHERE token = $${token}))`;
}

/** Run columns in the order of {@link RowCodec.runArrays}. */
export const RUN_UPSERT_TAIL = `ON CONFLICT (run_id) DO UPDATE SET
  thread_id = EXCLUDED.thread_id, created_at = EXCLUDED.created_at,
  updated_at = EXCLUDED.updated_at, status = EXCLUDED.status, root = EXCLUDED.root,
  record = EXCLUDED.record
WHERE r.status NOT IN ('done', 'cancelled')`;

/**
 * The upsert of the runs given as seven parallel arrays (see {@link RowCodec.runArrays}) at
 * parameters `$first`..`$first+6`, written only when `condition` holds.
 */
export function runUpsert(s: string, first: number, condition: string): string {
  const arrays = Array.from({ length: 7 }, (_, i) => `$${first + i}::text[]`).join(", ");
  return `INSERT INTO ${s}.runs AS r
    (run_id, thread_id, created_at, updated_at, status, root, record)
  SELECT u.run_id, u.thread_id, u.created_at, u.updated_at, u.status, u.root::boolean, u.record
  FROM unnest(${arrays}) AS u (run_id, thread_id, created_at, updated_at, status, root, record)
  WHERE ${condition}
  ${RUN_UPSERT_TAIL}`;
}

/**
 * Ends the lease whose fencing token is `$token` when `$flag` is true and `condition` holds: the
 * `releaseLease` of a write, in the write's own statement. The token stays for the next holder.
 */
export function releaseFencedLease(
  s: string,
  flag: number,
  token: number,
  condition: string,
): string {
  return `UPDATE ${s}.leases SET expires_at = '-infinity'
  WHERE $${flag}::boolean AND thread_id = $1 AND token = $${token}::bigint AND ${condition}`;
}
