/**
 * The SQL of the SQLite store, prepared once per connection. Statements whose WHERE clause
 * depends on the filters given (the list methods) are built in `queries.ts` and cached there.
 */
import type { DatabaseSync } from "node:sqlite";
import type { InterruptColumns } from "@rein/core/store";
import type {
  EncodedRunRow as RunRow,
  EncodedTaskResultRow as TaskResultRow,
  EncodedCheckpointRow,
  EncodedInterruptRow,
  EncodedThreadRow as ThreadRow,
} from "@rein/core/store";

/** A row of `checkpoints`. */
export interface CheckpointRow extends EncodedCheckpointRow {
  versions: string;
}

/** One link of a delta chain, as read by the recursive query. */
export interface ChainRow {
  channel: string;
  depth: number;
  kind: "full" | "delta";
  prev: string | null;
  value: string;
}

/** One version of a channel read by range. */
export interface RangeRow {
  version: string;
  kind: "full" | "delta";
  prev: string | null;
  value: string;
}

/** Values of a checkpoint insert, in column order. */
export type CheckpointValues = [
  thread_id: string,
  stream: string,
  id: string,
  parent_id: string | null,
  run_id: string,
  step: number,
  source: string,
  created_at: string,
  versions: string,
  next: string,
  metadata: string,
];

/** Values of a blob insert, in column order. */
export type BlobValues = [
  thread_id: string,
  stream: string,
  channel: string,
  version: string,
  kind: string,
  prev: string | null,
  value: string,
];

/** One group of {@link PendingSummaryStore.summarizePending}'s read. */
export interface PendingSummaryRow {
  tenant: string | null;
  rootGraph: string;
  count: number;
  oldestCreatedAt: string;
}

/**
 * The columns an interrupt record is rebuilt from: every SQL store's row, with the approval
 * policy, approvals and ladder stage always selected here (NULL: none).
 */
export type InterruptRow = Required<EncodedInterruptRow>;

/** Bind parameters of an interrupt upsert. */
export interface InterruptParams extends InterruptColumns {
  /** The root graph of the run tree: what the queue's app filter matches. */
  root_graph: string;
  answer: string | null;
  answered_by: string | null;
  answered_at: string | null;
  record: string;
  policy: string | null;
}

/** Bind parameters of a run upsert. */
export interface RunParams {
  run_id: string;
  thread_id: string;
  created_at: string;
  updated_at: string;
  status: string;
  root: number;
  record: string;
}

/** Columns an interrupt is read from. */
export const INTERRUPT_COLUMNS =
  "id, thread_id, run_id, task_id, graph, tenant, status, created_at, deadline, answer, answered_by, answered_at, record, policy, approvals, stage";

/** The columns a run record is rebuilt from. */
export const RUN_COLUMNS = "run_id, thread_id, created_at, updated_at, status, record";

/** The run and task-result rows this store reads, as every SQL store shapes them. */
export type { RunRow, TaskResultRow, ThreadRow };

type ThreadStream = { thread: string; stream: string };

/** What a write statement reports. */
export interface RunResult {
  /** Rows inserted, updated or deleted. */
  changes: number | bigint;
}

/**
 * The part of a `node:sqlite` statement the store uses, with typed parameters and rows
 * (node:sqlite types every row as a record of SQL values; the schema fixes their shape).
 */
export interface Stmt<P extends unknown[], Row = unknown> {
  /** The SQL the statement was prepared from. */
  readonly sourceSQL: string;
  run(...params: P): RunResult;
  get(...params: P): Row | undefined;
  all(...params: P): Row[];
}

/** A step's results (the thread, stream and checkpoint they belong to), and tasks among them. */
interface StepKey {
  thread: string;
  stream: string;
  checkpoint: string;
  /** Task ids, as a JSON array. */
  focus: string;
}

/** Prepares every fixed statement of the store on `db`. */
export function prepareStatements(db: DatabaseSync) {
  // Typed through `Stmt` so the declaration of the result can name its statement types.
  const prep = <P extends unknown[], Row = unknown>(sql: string): Stmt<P, Row> =>
    db.prepare(sql) as unknown as Stmt<P, Row>;
  return {
    // Threads ----------------------------------------------------------------------------------
    upsertThread: prep<[ThreadRow]>(
      `INSERT INTO threads (thread_id, tenant, created_at, updated_at, metadata, graph)
       VALUES (@thread_id, @tenant, @created_at, @updated_at, @metadata, @graph)
       ON CONFLICT (thread_id) DO UPDATE SET
         tenant = excluded.tenant, updated_at = excluded.updated_at, metadata = excluded.metadata,
         graph = excluded.graph`,
    ),
    getThread: prep<[string], ThreadRow>(
      "SELECT thread_id, tenant, created_at, updated_at, metadata, graph FROM threads WHERE thread_id = ?",
    ),

    // Checkpoints ------------------------------------------------------------------------------
    getHead: prep<[string, string], { checkpoint_id: string }>(
      "SELECT checkpoint_id FROM heads WHERE thread_id = ? AND stream = ?",
    ),
    setHead: prep<[string, string, string]>(
      `INSERT INTO heads (thread_id, stream, checkpoint_id) VALUES (?, ?, ?)
       ON CONFLICT (thread_id, stream) DO UPDATE SET checkpoint_id = excluded.checkpoint_id`,
    ),
    pendingCount: prep<[string], { n: number }>(
      `SELECT count(*) AS n FROM interrupts INDEXED BY interrupts_pending_by_thread
       WHERE thread_id = ? AND status = 'pending'`,
    ),
    // Positional parameters on the hot path: binding by name costs about twice as much.
    insertCheckpoint: prep<CheckpointValues>(
      `INSERT INTO checkpoints
         (thread_id, stream, id, parent_id, run_id, step, source, created_at, versions, next, metadata)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    getCheckpoint: prep<[string, string, string], CheckpointRow>(
      "SELECT * FROM checkpoints WHERE thread_id = ? AND stream = ? AND id = ?",
    ),
    getHeadId: prep<[string, string], { checkpoint_id: string; run_id: string }>(
      `SELECT h.checkpoint_id, c.run_id FROM heads h
       JOIN checkpoints c ON c.thread_id = h.thread_id AND c.stream = h.stream AND c.id = h.checkpoint_id
       WHERE h.thread_id = ? AND h.stream = ?`,
    ),
    getHeadCheckpoint: prep<[string, string], CheckpointRow>(
      `SELECT c.* FROM heads h
       JOIN checkpoints c ON c.thread_id = h.thread_id AND c.stream = h.stream AND c.id = h.checkpoint_id
       WHERE h.thread_id = ? AND h.stream = ?`,
    ),
    listCheckpoints: prep<[string, string, number], CheckpointRow>(
      "SELECT * FROM checkpoints WHERE thread_id = ? AND stream = ? ORDER BY id DESC LIMIT ?",
    ),
    listCheckpointsBefore: prep<[string, string, string, number], CheckpointRow>(
      `SELECT * FROM checkpoints WHERE thread_id = ? AND stream = ? AND id < ?
       ORDER BY id DESC LIMIT ?`,
    ),
    // First write of a version wins: versions are immutable once referenced.
    insertBlob: prep<BlobValues>(
      `INSERT INTO blobs (thread_id, stream, channel, version, kind, prev, value)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
    ),
    // The newest `limit` versions of a channel up to `version`: in a stream that never forked,
    // exactly the version's chain, read as one index range.
    chainRange: prep<[string, string, string, string, number], RangeRow>(
      `SELECT version, kind, prev, value FROM blobs
       WHERE thread_id = ? AND stream = ? AND channel = ? AND version <= ?
       ORDER BY version DESC LIMIT ?`,
    ),
    // The fallback for a forked stream: each chain followed link by link to its full blob. CROSS JOIN keeps
    // json_each as the outer loop, so each link is one primary-key seek, never a stream scan.
    readChains: prep<[ThreadStream & { versions: string }], ChainRow>(
      `WITH RECURSIVE chain (channel, depth, kind, prev, value) AS (
         SELECT b.channel, 0, b.kind, b.prev, b.value
         FROM json_each(@versions) AS w
         CROSS JOIN blobs AS b ON b.thread_id = @thread AND b.stream = @stream
                         AND b.channel = w.key AND b.version = w.value
         UNION ALL
         SELECT b.channel, c.depth + 1, b.kind, b.prev, b.value
         FROM chain AS c
         JOIN blobs AS b ON b.thread_id = @thread AND b.stream = @stream
                         AND b.channel = c.channel AND b.version = c.prev
         WHERE c.kind = 'delta'
       )
       SELECT channel, depth, kind, prev, value FROM chain ORDER BY channel, depth DESC`,
    ),

    // Task results -----------------------------------------------------------------------------
    // A task that has a `writes` result keeps it: no change then.
    putTaskResult: prep<[string, string, string, string, string, string]>(
      `INSERT INTO task_results (thread_id, stream, checkpoint_id, task_id, kind, value)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (thread_id, stream, checkpoint_id, task_id)
       DO UPDATE SET kind = excluded.kind, value = excluded.value
       WHERE task_results.kind <> 'writes'`,
    ),
    // One row holding a JSON array, not a row per task: with 1,000 tasks paused in a step, the
    // driver building a row object per task cost twice the query (every answer reads this).
    taskResultKinds: prep<[string, string, string], { kinds: string }>(
      `SELECT json_group_array(json_object('taskId', task_id, 'kind', kind) ORDER BY seq) AS kinds
       FROM task_results WHERE thread_id = ? AND stream = ? AND checkpoint_id = ?`,
    ),
    // The results of a few tasks of a step, by the unique key and ordered as `taskResultKinds`;
    // how many results the step has (from the unique index alone, no table row); and whether one
    // is paused (the first entry of the paused index, if any). One statement, one snapshot.
    stepKinds: prep<[StepKey], { kinds: string; recorded: number; paused: number }>(
      `SELECT
         (SELECT json_group_array(json_object('taskId', task_id, 'kind', kind) ORDER BY seq)
          FROM task_results
          WHERE thread_id = $thread AND stream = $stream AND checkpoint_id = $checkpoint
            AND task_id IN (SELECT value FROM json_each($focus))) AS kinds,
         (SELECT count(*) FROM task_results
          WHERE thread_id = $thread AND stream = $stream AND checkpoint_id = $checkpoint
         ) AS recorded,
         EXISTS (SELECT 1 FROM task_results
                 WHERE thread_id = $thread AND stream = $stream AND checkpoint_id = $checkpoint
                   AND kind = 'paused') AS paused`,
    ),
    listTaskResults: prep<[string, string, string], TaskResultRow>(
      `SELECT task_id, kind, value FROM task_results
       WHERE thread_id = ? AND stream = ? AND checkpoint_id = ?
       ORDER BY seq`,
    ),
    deletePaused: prep<[string, string, string, string]>(
      `DELETE FROM task_results WHERE thread_id = ? AND stream = ? AND checkpoint_id = ?
       AND task_id = ? AND kind = 'paused'`,
    ),

    // Interrupts -------------------------------------------------------------------------------
    // An existing row is replaced in place (keeping its seq, so thread order stays stable).
    upsertInterrupt: prep<[InterruptParams]>(
      `INSERT INTO interrupts (id, thread_id, run_id, task_id, graph, root_graph, tenant, status,
                               created_at, deadline, answer, answered_by, answered_at, record,
                               policy)
       VALUES (@id, @thread_id, @run_id, @task_id, @graph, @root_graph, @tenant, @status,
               @created_at, @deadline, @answer, @answered_by, @answered_at, @record, @policy)
       ON CONFLICT (id) DO UPDATE SET
         thread_id = excluded.thread_id, run_id = excluded.run_id, task_id = excluded.task_id,
         graph = excluded.graph, root_graph = excluded.root_graph,
         tenant = excluded.tenant, status = excluded.status, created_at = excluded.created_at,
         answer = excluded.answer,
         answered_by = excluded.answered_by, answered_at = excluded.answered_at,
         -- Once the timer took a ladder step, the question raised again keeps its ladder (its
         -- record), its next step (the deadline) and its policy (widened by an escalation).
         deadline = CASE WHEN interrupts.stage IS NULL THEN excluded.deadline
           ELSE interrupts.deadline END,
         record = CASE WHEN interrupts.stage IS NULL THEN excluded.record
           ELSE interrupts.record END,
         policy = CASE WHEN interrupts.stage IS NULL THEN excluded.policy
           ELSE interrupts.policy END
       WHERE interrupts.status = 'pending'`,
    ),
    getInterrupt: prep<[string], InterruptRow>(
      `SELECT ${INTERRUPT_COLUMNS} FROM interrupts WHERE id = ?`,
    ),
    threadInterrupts: prep<[string], InterruptRow>(
      `SELECT ${INTERRUPT_COLUMNS} FROM interrupts WHERE thread_id = ? ORDER BY created_at, seq`,
    ),
    threadInterruptsByStatus: prep<[string, string], InterruptRow>(
      `SELECT ${INTERRUPT_COLUMNS} FROM interrupts WHERE thread_id = ? AND status = ?
       ORDER BY created_at, seq`,
    ),
    // The partial index holds only pending rows with a deadline: the timer's query never scans.
    expiredInterrupts: prep<[string, number], InterruptRow>(
      `SELECT ${INTERRUPT_COLUMNS} FROM interrupts INDEXED BY interrupts_by_deadline
       WHERE status = 'pending' AND deadline IS NOT NULL AND deadline <= ?
       ORDER BY deadline, id LIMIT ?`,
    ),
    // The queue index holds pending rows first by status: one range of it, grouped.
    pendingSummary: prep<[], PendingSummaryRow>(
      `SELECT tenant, root_graph AS rootGraph, count(*) AS count,
         min(created_at) AS oldestCreatedAt
       FROM interrupts INDEXED BY interrupts_queue WHERE status = 'pending'
       GROUP BY tenant, root_graph`,
    ),
    interruptsById: prep<[string], InterruptRow>(
      `SELECT ${INTERRUPT_COLUMNS} FROM interrupts WHERE id IN (SELECT value FROM json_each(?))`,
    ),
    pendingPage: prep<[string, number], InterruptRow>(
      `SELECT ${INTERRUPT_COLUMNS} FROM interrupts INDEXED BY interrupts_pending_by_thread
       WHERE thread_id = ? AND status = 'pending' ORDER BY created_at, seq LIMIT ?`,
    ),
    taskInterrupts: prep<[string, string], InterruptRow>(
      `SELECT ${INTERRUPT_COLUMNS} FROM interrupts INDEXED BY interrupts_by_task
       WHERE thread_id = ? AND task_id IN (SELECT value FROM json_each(?))
       ORDER BY created_at, seq`,
    ),
    interruptStates: prep<
      [string],
      {
        id: string;
        status: string;
        run_id: string;
        policy: string | null;
        approvals: string | null;
      }
    >(
      `SELECT id, status, run_id, policy, approvals FROM interrupts
       WHERE id IN (SELECT value FROM json_each(?))`,
    ),
    // The approvals column is kept unless the answer applied under a policy.
    answerInterrupt: prep<[string, string, string, string | null, string]>(
      `UPDATE interrupts SET status = 'answered', answer = ?, answered_by = ?, answered_at = ?,
         approvals = coalesce(?, approvals)
       WHERE id = ? AND status = 'pending'`,
    ),
    // A ladder step, only while it is due: of two racing timers one changes the row.
    takeLadderStep: prep<[string | null, string, number, string | null, string, string]>(
      `UPDATE interrupts SET deadline = ?, stage = ?,
         policy = CASE WHEN ? THEN ? ELSE policy END
       WHERE id = ? AND status = 'pending' AND deadline = ?`,
    ),
    setApprovals: prep<[string, string]>(
      `UPDATE interrupts SET approvals = ? WHERE id = ? AND status = 'pending'`,
    ),
    setStatus: prep<[string, string]>(
      `UPDATE interrupts SET status = ?
       WHERE id IN (SELECT value FROM json_each(?)) AND status = 'pending'`,
    ),

    // Requests ---------------------------------------------------------------------------------
    supersede: prep<[string]>(
      `UPDATE interrupts SET status = 'superseded'
       WHERE id IN (SELECT value FROM json_each(?)) AND status IN ('pending', 'answered')`,
    ),

    getRequest: prep<[string], { result: string | null }>(
      "SELECT result FROM requests WHERE request_id = ?",
    ),
    insertRequest: prep<[string, string]>(
      "INSERT INTO requests (request_id, thread_id) VALUES (?, ?)",
    ),
    putRequestResult: prep<[string, string]>(
      `INSERT INTO requests (request_id, result) VALUES (?, ?)
       ON CONFLICT (request_id) DO UPDATE SET result = excluded.result`,
    ),

    // Once -------------------------------------------------------------------------------------
    getOnce: prep<[string, string, string], { value: string }>(
      "SELECT value FROM once_results WHERE thread_id = ? AND task_id = ? AND key = ?",
    ),
    insertOnce: prep<[string, string, string, string]>(
      `INSERT INTO once_results (thread_id, task_id, key, value) VALUES (?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
    ),

    // Side records -----------------------------------------------------------------------------
    // Parameters: has_tenant, tenant, kind, key, now (epoch ms); an expired row reads as none.
    getSideRecord: prep<[number, string, string, string, number], { value: string }>(
      `SELECT value FROM side_records
       WHERE has_tenant = ? AND tenant = ? AND kind = ? AND key = ?
         AND (expires_at IS NULL OR expires_at > ?)`,
    ),
    // First write wins; an expired row is taken over (its value, expiry and thread replaced).
    insertSideRecord: prep<
      [number, string, string, string, string, number | null, string | null, number]
    >(
      `INSERT INTO side_records (has_tenant, tenant, kind, key, value, expires_at, thread_id)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (has_tenant, tenant, kind, key) DO UPDATE
         SET value = excluded.value, expires_at = excluded.expires_at,
             thread_id = excluded.thread_id
         WHERE side_records.expires_at IS NOT NULL AND side_records.expires_at <= ?`,
    ),

    // Runs -------------------------------------------------------------------------------------
    // A done or cancelled run is final: the WHERE keeps it as it is.
    upsertRun: prep<[RunParams]>(
      `INSERT INTO runs (run_id, thread_id, created_at, updated_at, status, root, record)
       VALUES (@run_id, @thread_id, @created_at, @updated_at, @status, @root, @record)
       ON CONFLICT (run_id) DO UPDATE SET
         thread_id = excluded.thread_id, created_at = excluded.created_at,
         updated_at = excluded.updated_at, status = excluded.status, root = excluded.root,
         record = excluded.record
       WHERE runs.status NOT IN ('done', 'cancelled')`,
    ),
    /** An answered run moves from `interrupted` to `running`; no other status changes. */
    resumeRun: prep<[string, string]>(
      `UPDATE runs SET status = 'running', updated_at = ? WHERE run_id = ? AND status = 'interrupted'`,
    ),
    getRun: prep<[string], RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = ?`),
    listRuns: prep<[string], RunRow>(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE thread_id = ? ORDER BY created_at, seq`,
    ),

    // Steering and audit -----------------------------------------------------------------------
    insertSteering: prep<[string, string, string]>(
      "INSERT INTO steering (id, thread_id, record) VALUES (?, ?, ?)",
    ),
    listSteering: prep<[string], { record: string }>(
      "SELECT record FROM steering WHERE thread_id = ? ORDER BY seq",
    ),
    // The chain's newest link: appendAuditLine reads it inside the write transaction.
    auditHead: prep<[string], { n: number; hash: string }>(
      "SELECT n, hash FROM audit WHERE thread_id = ? AND n IS NOT NULL ORDER BY n DESC LIMIT 1",
    ),
    insertAudit: prep<[string, string, number, string, string]>(
      "INSERT INTO audit (thread_id, record, n, prev_hash, hash) VALUES (?, ?, ?, ?, ?)",
    ),
    upsertAuditSeal: prep<[string, number, string, string, string]>(
      `INSERT INTO audit_seals (thread_id, n, hash, mac, sealed_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (thread_id) DO UPDATE SET n = excluded.n, hash = excluded.hash,
         mac = excluded.mac, sealed_at = excluded.sealed_at`,
    ),

    // Leases -----------------------------------------------------------------------------------
    // One statement: taken when free, expired, or already ours, with the next fencing token;
    // no row comes back when another owner holds it.
    acquireLease: prep<
      [{ thread: string; owner: string; now: number; expires: number }],
      { token: number }
    >(
      `INSERT INTO leases (thread_id, owner, expires_at, token) VALUES (@thread, @owner, @expires, 1)
       ON CONFLICT (thread_id) DO UPDATE SET owner = excluded.owner,
         expires_at = excluded.expires_at, token = leases.token + 1
       WHERE leases.owner = excluded.owner OR leases.expires_at <= @now
       RETURNING token`,
    ),
    leaseToken: prep<[string], { token: number }>("SELECT token FROM leases WHERE thread_id = ?"),
    renewLease: prep<[{ thread: string; owner: string; now: number; expires: number }]>(
      `UPDATE leases SET expires_at = @expires
       WHERE thread_id = @thread AND owner = @owner AND expires_at > @now`,
    ),
    // Expired, not deleted: the token must keep growing for the next holder.
    releaseLease: prep<[string, string]>(
      "UPDATE leases SET expires_at = 0 WHERE thread_id = ? AND owner = ?",
    ),
    expireLease: prep<[string]>("UPDATE leases SET expires_at = 0 WHERE thread_id = ?"),
    releaseFencedLease: prep<[string, number]>(
      "UPDATE leases SET expires_at = 0 WHERE thread_id = ? AND token = ?",
    ),
    getLease: prep<[string, number], { owner: string; expires_at: number; token: number }>(
      "SELECT owner, expires_at, token FROM leases WHERE thread_id = ? AND expires_at > ?",
    ),

    // Delete -----------------------------------------------------------------------------------
    deleteThread: [
      "threads",
      "heads",
      "checkpoints",
      "blobs",
      "task_results",
      "interrupts",
      "runs",
      "steering",
      "audit",
      "audit_seals",
      "once_results",
      "requests",
      "side_records",
    ].map((table) => prep<[string]>(`DELETE FROM ${table} WHERE thread_id = ?`)),
  };
}

/** The prepared statements of one connection. */
export type Statements = ReturnType<typeof prepareStatements>;
