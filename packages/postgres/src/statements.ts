/**
 * The fixed SQL of the Postgres store for one schema. Each statement is named, so a pooled
 * connection parses and plans it once and then only binds and executes it.
 */
import { createHash } from "node:crypto";
import { answerStatements } from "./answer-statements.ts";
import {
  fenceCte,
  fencedWrite,
  fenceOk,
  interruptUpsert,
  RUN_UPSERT_TAIL,
  releaseFencedLease,
  runUpsert,
  type Named,
} from "./fragments.ts";

export type { Named } from "./fragments.ts";

/** Columns an interrupt is read from. */
export const INTERRUPT_COLUMNS =
  "id, thread_id, run_id, task_id, graph, tenant, status, created_at, deadline, answer, answered_by, answered_at, record, policy, approvals, stage";

/** Columns a run is read from. */
export const RUN_COLUMNS = "run_id, thread_id, created_at, updated_at, status, record";

/** The SQL of every fixed statement, for the quoted schema `s`. */
export function statementsFor(s: string) {
  const prefix = `rein_${createHash("sha256").update(s).digest("hex").slice(0, 10)}_`;
  const named = (name: string, text: string): Named => ({ name: prefix + name, text });
  return {
    ...answerStatements(s, named),
    upsertThread: named(
      "upsert_thread",
      fencedWrite(
        s,
        7,
        1,
        `INSERT INTO ${s}.threads (thread_id, tenant, created_at, updated_at, metadata, graph)
         SELECT $1, $2, $3, $4, $5, $6 WHERE ${fenceOk(7)}
         ON CONFLICT (thread_id) DO UPDATE SET
           tenant = EXCLUDED.tenant, updated_at = EXCLUDED.updated_at,
           metadata = EXCLUDED.metadata, graph = EXCLUDED.graph`,
      ),
    ),
    // Everything a call on a thread reads first, in one round trip (`thread_head`, migration 5).
    // $3 is the id of a head the caller already holds (or NULL): that checkpoint's row is not
    // sent again.
    getThreadHead: named("get_thread_head", `SELECT ${s}.thread_head($1, $2, $3) AS head`),
    getThread: named(
      "get_thread",
      `SELECT thread_id, tenant, created_at, updated_at, metadata, graph FROM ${s}.threads
       WHERE thread_id = $1`,
    ),

    /**
     * The whole step commit in one statement (one round trip, atomic): the head row is moved by a
     * conditional UPDATE (or created by an INSERT for the first commit) and every other write
     * runs only if that succeeded. A concurrent commit on the same stream waits on the head's row
     * lock, then re-checks `checkpoint_id = $4` against the winner's row and matches nothing.
     * $1 thread, $2 stream, $3 id, $4 expected head, $5..$12 checkpoint columns,
     * $13..$17 blob arrays, $18..$30 interrupt arrays, $31..$37 run arrays, $38 fencing token, $39..$42 task result arrays,
     * $43..$47 thread row (all NULL: none), $48..$49 audit arrays, $50 release the lease, $51 interrupt root graphs,
     * $52 interrupt policies, $53 the thread row's graph.
     */
    commitStep: named(
      "commit_step",
      `WITH ${fenceCte(s, 38)}, cas AS (
         UPDATE ${s}.heads SET checkpoint_id = $3
         WHERE $4::text IS NOT NULL AND thread_id = $1 AND stream = $2 AND checkpoint_id = $4
           AND ${fenceOk(38)}
         RETURNING 1
       ), first AS (
         INSERT INTO ${s}.heads (thread_id, stream, checkpoint_id)
         SELECT $1, $2, $3 WHERE $4::text IS NULL AND ${fenceOk(38)}
         ON CONFLICT DO NOTHING
         RETURNING 1
       ), ok AS (
         SELECT 1 FROM cas UNION ALL SELECT 1 FROM first
       ), checkpoint AS (
         INSERT INTO ${s}.checkpoints
           (thread_id, stream, id, parent_id, run_id, step, source, created_at, versions, next,
            metadata)
         SELECT $1, $2, $3, $5, $6, $7, $8, $9, $10::jsonb, $11, $12 FROM ok
       ), blobs AS (
         INSERT INTO ${s}.blobs (thread_id, stream, channel, version, kind, prev, value)
         SELECT $1, $2, b.* FROM unnest($13::text[], $14::text[], $15::text[], $16::text[],
           $17::text[]) AS b
         WHERE EXISTS (SELECT 1 FROM ok)
         ON CONFLICT DO NOTHING
       ), interrupts AS (
         ${interruptUpsert(s, 18, 51, "EXISTS (SELECT 1 FROM ok)", "$52", true)}
       ), runs AS (
         ${runUpsert(s, 31, "EXISTS (SELECT 1 FROM ok)")}
       ), tasks AS (
         INSERT INTO ${s}.task_results AS t
           (thread_id, stream, checkpoint_id, task_id, kind, value)
         SELECT $1, $2, u.* FROM unnest($39::text[], $40::text[], $41::text[], $42::text[]) AS u
         WHERE EXISTS (SELECT 1 FROM ok)
         ON CONFLICT (thread_id, stream, checkpoint_id, task_id)
         DO UPDATE SET kind = EXCLUDED.kind, value = EXCLUDED.value
         WHERE t.kind <> 'writes'
       ), thread AS (
         INSERT INTO ${s}.threads (thread_id, tenant, created_at, updated_at, metadata, graph)
         SELECT $43, $44, $45, $46, $47, $53::text
         WHERE $43::text IS NOT NULL AND EXISTS (SELECT 1 FROM ok)
         ON CONFLICT (thread_id) DO UPDATE SET
           tenant = EXCLUDED.tenant, updated_at = EXCLUDED.updated_at, metadata = EXCLUDED.metadata,
           graph = EXCLUDED.graph
       ), audit AS (
         INSERT INTO ${s}.audit (thread_id, record)
         SELECT a.thread_id, a.record
         FROM unnest($48::text[], $49::text[]) WITH ORDINALITY AS a (thread_id, record, n)
         WHERE EXISTS (SELECT 1 FROM ok) ORDER BY a.n
       ), released AS (
         ${releaseFencedLease(s, 50, 38, "EXISTS (SELECT 1 FROM ok)")}
       )
       SELECT (SELECT count(*)::int FROM ok) AS ok, (SELECT token FROM fence) AS current_token`,
    ),
    getHead: named(
      "get_head",
      `SELECT checkpoint_id FROM ${s}.heads WHERE thread_id = $1 AND stream = $2`,
    ),
    getCheckpoint: named(
      "get_checkpoint",
      `SELECT * FROM ${s}.checkpoints WHERE thread_id = $1 AND stream = $2 AND id = $3`,
    ),
    getHeadCheckpoint: named(
      "get_head_checkpoint",
      `SELECT c.* FROM ${s}.heads h
       JOIN ${s}.checkpoints c
         ON c.thread_id = h.thread_id AND c.stream = h.stream AND c.id = h.checkpoint_id
       WHERE h.thread_id = $1 AND h.stream = $2`,
    ),
    listCheckpoints: named(
      "list_checkpoints",
      `SELECT * FROM ${s}.checkpoints WHERE thread_id = $1 AND stream = $2
       ORDER BY id DESC LIMIT $3`,
    ),
    listCheckpointsBefore: named(
      "list_checkpoints_before",
      `SELECT * FROM ${s}.checkpoints WHERE thread_id = $1 AND stream = $2 AND id < $3
       ORDER BY id DESC LIMIT $4`,
    ),
    // For each wanted channel, its newest versions up to the wanted one, as many as the chain
    // has links (an index range, backwards): in a stream that never forked, exactly the chain.
    // $3 channels, $4 versions, $5 link counts.
    chainRanges: named(
      "chain_ranges",
      `SELECT w.channel, b.version, b.kind, b.prev, b.value
       FROM unnest($3::text[], $4::text[], $5::int[]) AS w (channel, version, links)
       CROSS JOIN LATERAL (
         SELECT version, kind, prev, value FROM ${s}.blobs b
         WHERE b.thread_id = $1 AND b.stream = $2 AND b.channel = w.channel
           AND b.version <= w.version
         ORDER BY b.version DESC LIMIT w.links
       ) b`,
    ),
    // The fallback for a forked stream: each chain followed link by link to its full blob. Each link is
    // a LATERAL primary-key lookup; `LIMIT 1` (the key is unique) keeps the planner from turning
    // it into a join that scans the whole stream's blobs once per link.
    readChains: named(
      "read_chains",
      `WITH RECURSIVE chain (channel, depth, kind, prev, value) AS (
         SELECT b.channel, 0, b.kind, b.prev, b.value
         FROM unnest($3::text[], $4::text[]) AS w (channel, version)
         CROSS JOIN LATERAL (
           SELECT * FROM ${s}.blobs b WHERE b.thread_id = $1 AND b.stream = $2
             AND b.channel = w.channel AND b.version = w.version LIMIT 1
         ) b
         UNION ALL
         SELECT b.channel, c.depth + 1, b.kind, b.prev, b.value
         FROM chain c
         CROSS JOIN LATERAL (
           SELECT * FROM ${s}.blobs b WHERE b.thread_id = $1 AND b.stream = $2
             AND b.channel = c.channel AND b.version = c.prev LIMIT 1
         ) b
         WHERE c.kind = 'delta'
       )
       SELECT channel, depth, kind, prev, value FROM chain ORDER BY channel, depth DESC`,
    ),

    /**
     * A task outcome in one statement (`task_outcome`, migration 6): the result is upserted
     * unless a `writes` result is there (first writes wins), and its interrupts and
     * supersessions apply only if it was; with `$31`, the thread's oldest pending interrupts
     * after it. $1..$6 result, $7..$19 interrupt arrays, $20 superseded ids, $21 fencing token,
     * $22..$28 run arrays (stored only with an applied result), $29 release the lease,
     * $30 the interrupts' root graphs, $31 the pending page's size (NULL: not read), $32 the
     * interrupts' approval policies (migration 7).
     */
    putTaskOutcome: named(
      "put_task_outcome",
      `SELECT ${s}.task_outcome(${Array.from({ length: 32 }, (_, i) => `$${i + 1}`).join(", ")}) AS r`,
    ),
    taskResultKinds: named(
      "task_result_kinds",
      `SELECT task_id, kind FROM ${s}.task_results
       WHERE thread_id = $1 AND stream = $2 AND checkpoint_id = $3 ORDER BY seq`,
    ),
    listTaskResults: named(
      "list_task_results",
      `SELECT task_id, kind, value FROM ${s}.task_results
       WHERE thread_id = $1 AND stream = $2 AND checkpoint_id = $3 ORDER BY seq`,
    ),

    getInterrupt: named(
      "get_interrupt",
      `SELECT ${INTERRUPT_COLUMNS} FROM ${s}.interrupts WHERE id = $1`,
    ),
    interruptsById: named(
      "interrupts_by_id",
      `SELECT ${INTERRUPT_COLUMNS} FROM ${s}.interrupts WHERE id = ANY ($1::text[])`,
    ),
    // The page and the count in one round trip; only the page's rows are read whole.
    pendingPage: named(
      "pending_page",
      `SELECT (SELECT count(*)::int FROM ${s}.interrupts
                WHERE thread_id = $1 AND status = 'pending') AS total,
         (SELECT coalesce(json_agg(p), '[]') FROM (
            SELECT ${INTERRUPT_COLUMNS} FROM ${s}.interrupts
            WHERE thread_id = $1 AND status = 'pending' ORDER BY created_at, seq LIMIT $2) p
         ) AS items`,
    ),
    taskInterrupts: named(
      "task_interrupts",
      `SELECT ${INTERRUPT_COLUMNS} FROM ${s}.interrupts
       WHERE thread_id = $1 AND task_id = ANY ($2::text[]) ORDER BY created_at, seq`,
    ),
    threadInterrupts: named(
      "thread_interrupts",
      `SELECT ${INTERRUPT_COLUMNS} FROM ${s}.interrupts WHERE thread_id = $1
       AND ($2::text IS NULL OR status = $2) ORDER BY created_at, seq`,
    ),
    expiredInterrupts: named(
      "expired_interrupts",
      `SELECT ${INTERRUPT_COLUMNS} FROM ${s}.interrupts
       WHERE status = 'pending' AND deadline IS NOT NULL AND deadline <= $1
       ORDER BY deadline, id LIMIT $2`,
    ),
    pendingSummary: named(
      "pending_summary",
      `SELECT tenant, root_graph AS "rootGraph", count(*)::int AS count,
         min(created_at) AS "oldestCreatedAt"
       FROM ${s}.interrupts WHERE status = 'pending' GROUP BY tenant, root_graph`,
    ),
    getRequest: named("get_request", `SELECT result FROM ${s}.requests WHERE request_id = $1`),

    putRequestResult: named(
      "put_request_result",
      fencedWrite(
        s,
        4,
        3,
        `INSERT INTO ${s}.requests (request_id, result) SELECT $1, $2 WHERE ${fenceOk(4)}
         ON CONFLICT (request_id) DO UPDATE SET result = EXCLUDED.result`,
      ),
    ),
    getOnce: named(
      "get_once",
      `SELECT value FROM ${s}.once_results WHERE thread_id = $1 AND task_id = $2 AND key = $3`,
    ),
    // The value comes back with the current token: the inserted one, or the one stored before.
    putOnce: named(
      "put_once",
      `WITH ${fenceCte(s, 5)}, inserted AS (
         INSERT INTO ${s}.once_results (thread_id, task_id, key, value)
         SELECT $1, $2, $3, $4 WHERE ${fenceOk(5)}
         ON CONFLICT DO NOTHING RETURNING value
       )
       SELECT (SELECT token FROM fence) AS current_token,
         coalesce((SELECT value FROM inserted),
           (SELECT value FROM ${s}.once_results
            WHERE thread_id = $1 AND task_id = $2 AND key = $3)) AS value`,
    ),

    // Side records: $1 has_tenant, $2 tenant, $3 kind, $4 key; an expired row reads as none.
    getSideRecord: named(
      "get_side_record",
      `SELECT value FROM ${s}.side_records
       WHERE has_tenant = $1 AND tenant = $2 AND kind = $3 AND key = $4
         AND (expires_at IS NULL OR expires_at > now())`,
    ),
    // First write wins; an expired row is taken over. `inserted` is this write's value when it
    // won; `value` the row this statement's snapshot saw otherwise.
    putSideRecord: named(
      "put_side_record",
      `WITH inserted AS (
         INSERT INTO ${s}.side_records
           (has_tenant, tenant, kind, key, value, expires_at, thread_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (has_tenant, tenant, kind, key) DO UPDATE
           SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at,
               thread_id = EXCLUDED.thread_id
           WHERE ${s}.side_records.expires_at IS NOT NULL
             AND ${s}.side_records.expires_at <= now()
         RETURNING value
       )
       SELECT (SELECT value FROM inserted) AS inserted,
         (SELECT value FROM ${s}.side_records
          WHERE has_tenant = $1 AND tenant = $2 AND kind = $3 AND key = $4
            AND (expires_at IS NULL OR expires_at > now())) AS value`,
    ),

    upsertRun: named(
      "upsert_run",
      fencedWrite(
        s,
        8,
        2,
        `INSERT INTO ${s}.runs AS r
           (run_id, thread_id, created_at, updated_at, status, root, record)
         SELECT $1, $2, $3, $4, $5, $6, $7 WHERE ${fenceOk(8)}
         ${RUN_UPSERT_TAIL}`,
      ),
    ),
    runsByStatus: named(
      "runs_by_status",
      `SELECT ${RUN_COLUMNS} FROM ${s}.runs
       WHERE status = $1 AND (NOT $2::boolean OR root) AND (updated_at, run_id) > ($3, $4)
       ORDER BY updated_at, run_id LIMIT $5`,
    ),
    getRun: named("get_run", `SELECT ${RUN_COLUMNS} FROM ${s}.runs WHERE run_id = $1`),
    listRuns: named(
      "list_runs",
      `SELECT ${RUN_COLUMNS} FROM ${s}.runs WHERE thread_id = $1 ORDER BY created_at, seq`,
    ),
    insertSteering: named(
      "insert_steering",
      fencedWrite(
        s,
        4,
        2,
        `INSERT INTO ${s}.steering (id, thread_id, record) SELECT $1, $2, $3 WHERE ${fenceOk(4)}`,
      ),
    ),
    listSteering: named(
      "list_steering",
      `SELECT record FROM ${s}.steering WHERE thread_id = $1 ORDER BY seq`,
    ),
    // A ladder step, only while it is due (of two racing timers one changes the row), and its
    // audit line in the same statement (the chain trigger links it).
    takeLadderStep: named(
      "take_ladder_step",
      `WITH step AS (
         UPDATE ${s}.interrupts SET deadline = $3, stage = $4,
           policy = CASE WHEN $5::boolean THEN $6 ELSE policy END
         WHERE id = $1 AND status = 'pending' AND deadline = $2
         RETURNING thread_id
       ), audit AS (
         INSERT INTO ${s}.audit (thread_id, record) SELECT thread_id, $7 FROM step
       )
       SELECT count(*)::int AS taken FROM step`,
    ),
    insertAudit: named(
      "insert_audit",
      fencedWrite(
        s,
        3,
        1,
        `INSERT INTO ${s}.audit (thread_id, record) SELECT $1, $2 WHERE ${fenceOk(3)}`,
      ),
    ),

    // Signed heads of audit chains, one row per thread, replaced as the head moves.
    auditLegacyUntil: named(
      "audit_legacy_until",
      `SELECT value FROM ${s}.store_settings WHERE key = 'audit_legacy_until'`,
    ),
    upsertAuditSeals: named(
      "upsert_audit_seals",
      `INSERT INTO ${s}.audit_seals (thread_id, n, hash, mac, sealed_at)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[])
       ON CONFLICT (thread_id) DO UPDATE SET n = EXCLUDED.n, hash = EXCLUDED.hash,
         mac = EXCLUDED.mac, sealed_at = EXCLUDED.sealed_at`,
    ),

    // Leases use the database clock, so processes on machines with skewed clocks agree.
    // The token comes from a sequence: it grows across holders, releases and server crashes.
    acquireLease: named(
      "acquire_lease",
      `INSERT INTO ${s}.leases AS l (thread_id, owner, expires_at, token)
       VALUES ($1, $2, clock_timestamp() + $3 * interval '1 millisecond',
         nextval('${s}.lease_tokens'))
       ON CONFLICT (thread_id) DO UPDATE SET owner = EXCLUDED.owner,
         expires_at = EXCLUDED.expires_at, token = nextval('${s}.lease_tokens')
       WHERE l.owner = EXCLUDED.owner OR l.expires_at <= clock_timestamp()
       RETURNING token`,
    ),
    // The lease, then a call's first reads after it, in one round trip (`lease_and_read`,
    // migration 5). $1 thread, $2 owner, $3 ttl, $4 known head id, $5 request id,
    // $6 pending page size, $7 interrupt ids, $8 run id (each NULL: not read).
    leaseAndRead: named(
      "lease_and_read",
      `SELECT ${s}.lease_and_read($1, $2, $3, $4, $5, $6, $7, $8) AS r`,
    ),
    renewLease: named(
      "renew_lease",
      `UPDATE ${s}.leases SET expires_at = clock_timestamp() + $3 * interval '1 millisecond'
       WHERE thread_id = $1 AND owner = $2 AND expires_at > clock_timestamp()`,
    ),
    releaseLease: named(
      "release_lease",
      `UPDATE ${s}.leases SET expires_at = '-infinity' WHERE thread_id = $1 AND owner = $2`,
    ),
    getLease: named(
      "get_lease",
      `SELECT owner, expires_at, token FROM ${s}.leases
       WHERE thread_id = $1 AND expires_at > clock_timestamp()`,
    ),

    // Every table of a thread in one statement: one round trip, atomic.
    deleteThread: named(
      "delete_thread",
      `WITH ${[
        "threads",
        "heads",
        "checkpoints",
        "blobs",
        "task_results",
        "interrupts",
        "runs",
        "steering",
        "audit",
        "audit_heads",
        "audit_seals",
        "once_results",
        "requests",
        "side_records",
      ]
        .map((table) => `d_${table} AS (DELETE FROM ${s}.${table} WHERE thread_id = $1)`)
        .join(",\n")}
       UPDATE ${s}.leases SET expires_at = '-infinity' WHERE thread_id = $1`,
    ),
  };
}

/** The named statements of one schema. */
export type Statements = ReturnType<typeof statementsFor>;
