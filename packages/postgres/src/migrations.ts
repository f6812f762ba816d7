/**
 * Versioned schema migrations of the Postgres store, in a schema of its own.
 *
 * `schema_migrations` (in that schema) records the versions applied. {@link migrate} runs the
 * missing ones in one transaction holding a transaction-scoped advisory lock keyed by the schema
 * name, so two processes starting at once serialize instead of racing on `CREATE TABLE`, and a
 * failure leaves the previous version intact (Postgres DDL is transactional). A schema migrated
 * by a newer Rein is refused with {@link SchemaVersionError}.
 */
import type { Pool } from "pg";
import { guarded, storeError } from "./connection.ts";
import { approvalFunctions, TASK_OUTCOME } from "./approval-functions.ts";
import { auditChainMigration, auditLegacyUntilMigration } from "./audit.ts";
import { SchemaVersionError } from "@rein/core";
import { LADDER_SCHEMA } from "./ladder-schema.ts";
import { WEBHOOK_SCHEMA } from "./webhook-schema.ts";
import { API_KEYS_SCHEMA } from "./api-key-schema.ts";
import { PENDING_QUEUE_INDEXES } from "./queue-index-schema.ts";
import { SIDE_RECORDS } from "./side-record-schema.ts";
import { LEGACY_SIDE_RECORDS } from "./legacy-side-records.ts";

/** One schema change. `sql` receives the quoted schema name and may hold several statements. */
export interface Migration {
  version: number;
  name: string;
  sql: (schema: string) => string;
}

/** Text columns that are compared or ordered use the "C" collation: byte order, like JS. */
const KEY = 'text COLLATE "C"';

/** The schema, as an ordered list of migrations. Append new ones; never edit applied ones. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "initial schema",
    sql: (s) => `
      CREATE TABLE ${s}.threads (
        thread_id  ${KEY} PRIMARY KEY,
        tenant     ${KEY},
        created_at ${KEY} NOT NULL,
        updated_at text NOT NULL,
        metadata   text NOT NULL
      );
      CREATE INDEX threads_by_created ON ${s}.threads (created_at DESC, thread_id DESC);
      CREATE INDEX threads_by_tenant ON ${s}.threads (tenant, created_at DESC, thread_id DESC);

      -- The head of each checkpoint stream: the row commitStep compares-and-sets (row lock).
      CREATE TABLE ${s}.heads (
        thread_id     ${KEY} NOT NULL,
        stream        ${KEY} NOT NULL,
        checkpoint_id ${KEY} NOT NULL,
        PRIMARY KEY (thread_id, stream)
      );

      CREATE TABLE ${s}.checkpoints (
        thread_id  ${KEY} NOT NULL,
        stream     ${KEY} NOT NULL,
        id         ${KEY} NOT NULL,
        parent_id  ${KEY},
        run_id     ${KEY} NOT NULL,
        step       integer NOT NULL,
        source     text NOT NULL,
        created_at text NOT NULL,
        versions   jsonb NOT NULL,
        next       text NOT NULL,
        metadata   text NOT NULL,
        PRIMARY KEY (thread_id, stream, id)
      );

      -- Channel values by version; a delta holds only what was appended since prev.
      CREATE TABLE ${s}.blobs (
        thread_id ${KEY} NOT NULL,
        stream    ${KEY} NOT NULL,
        channel   ${KEY} NOT NULL,
        version   ${KEY} NOT NULL,
        kind      text NOT NULL CHECK (kind IN ('full', 'delta')),
        prev      ${KEY},
        value     text NOT NULL,
        PRIMARY KEY (thread_id, stream, channel, version)
      );

      CREATE TABLE ${s}.task_results (
        seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        thread_id     ${KEY} NOT NULL,
        stream        ${KEY} NOT NULL,
        checkpoint_id ${KEY} NOT NULL,
        task_id       ${KEY} NOT NULL,
        kind          text NOT NULL CHECK (kind IN ('writes', 'paused')),
        value         text NOT NULL,
        UNIQUE (thread_id, stream, checkpoint_id, task_id)
      );

      -- Mutable fields (status, answer) are columns; the rest of the record is in 'record'.
      CREATE TABLE ${s}.interrupts (
        seq         bigint GENERATED ALWAYS AS IDENTITY,
        id          ${KEY} PRIMARY KEY,
        thread_id   ${KEY} NOT NULL,
        run_id      ${KEY} NOT NULL,
        graph       ${KEY} NOT NULL,
        tenant      ${KEY},
        status      text NOT NULL
                    CHECK (status IN ('pending', 'answered', 'cancelled', 'superseded')),
        created_at  ${KEY} NOT NULL,
        deadline    ${KEY},
        answer      text,
        answered_by text,
        answered_at text,
        record      text NOT NULL
      );
      CREATE INDEX interrupts_queue ON ${s}.interrupts (status, created_at DESC, id DESC);
      CREATE INDEX interrupts_by_created ON ${s}.interrupts (created_at DESC, id DESC);
      CREATE INDEX interrupts_by_thread ON ${s}.interrupts (thread_id, created_at, seq);
      CREATE INDEX interrupts_by_tenant
        ON ${s}.interrupts (tenant, status, created_at DESC, id DESC);
      CREATE INDEX interrupts_by_graph ON ${s}.interrupts (graph, status, created_at DESC, id DESC);
      CREATE INDEX interrupts_by_run ON ${s}.interrupts (run_id, created_at DESC, id DESC);
      CREATE INDEX interrupts_by_deadline ON ${s}.interrupts (deadline, id)
        WHERE status = 'pending' AND deadline IS NOT NULL;

      CREATE TABLE ${s}.runs (
        seq        bigint GENERATED ALWAYS AS IDENTITY,
        run_id     ${KEY} PRIMARY KEY,
        thread_id  ${KEY} NOT NULL,
        created_at ${KEY} NOT NULL,
        record     text NOT NULL
      );
      CREATE INDEX runs_by_thread ON ${s}.runs (thread_id, created_at, seq);

      CREATE TABLE ${s}.steering (
        seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id        text NOT NULL,
        thread_id ${KEY} NOT NULL,
        record    text NOT NULL
      );
      CREATE INDEX steering_by_thread ON ${s}.steering (thread_id, seq);

      CREATE TABLE ${s}.audit (
        seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        thread_id ${KEY} NOT NULL,
        record    text NOT NULL
      );
      CREATE INDEX audit_by_thread ON ${s}.audit (thread_id, seq);

      CREATE TABLE ${s}.once_results (
        thread_id ${KEY} NOT NULL,
        task_id   ${KEY} NOT NULL,
        key       ${KEY} NOT NULL,
        value     text NOT NULL,
        PRIMARY KEY (thread_id, task_id, key)
      );

      CREATE TABLE ${s}.requests (
        request_id ${KEY} PRIMARY KEY,
        thread_id  ${KEY},
        result     text
      );
      CREATE INDEX requests_by_thread ON ${s}.requests (thread_id);

      CREATE TABLE ${s}.leases (
        thread_id  ${KEY} PRIMARY KEY,
        owner      text NOT NULL,
        expires_at timestamptz NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: "unlogged leases",
    // A lease is worth nothing after a server crash (its owner is gone too), so it needs no WAL:
    // taking and releasing one then costs no disk flush, two fewer per run.
    sql: (s) => `ALTER TABLE ${s}.leases SET UNLOGGED`,
  },
  {
    version: 3,
    name: "fencing tokens and runs by status",
    // Tokens come from a (logged) sequence: the unlogged lease table is emptied by a server
    // crash, and a token handed out afterwards must still exceed every earlier one. Run status,
    // update time and rootness get columns the recovery sweep's index can serve.
    sql: (s) => `
      CREATE SEQUENCE ${s}.lease_tokens;
      ALTER TABLE ${s}.leases ADD COLUMN token bigint NOT NULL DEFAULT 0;
      ALTER TABLE ${s}.runs
        ADD COLUMN status text NOT NULL DEFAULT 'running',
        ADD COLUMN updated_at text NOT NULL DEFAULT '',
        ADD COLUMN root boolean NOT NULL DEFAULT true;
      UPDATE ${s}.runs SET
        status = coalesce(record::jsonb ->> 'status', 'running'),
        updated_at = coalesce(record::jsonb ->> 'updatedAt', created_at),
        root = coalesce(jsonb_typeof(record::jsonb -> 'parentRunId'), 'null') = 'null';
      CREATE INDEX runs_by_status ON ${s}.runs (status, updated_at, run_id);
    `,
  },
  {
    version: 4,
    name: "interrupts by task",
    // A continuation reads the rows of the tasks it runs, not its run's: answering one of 1,000
    // parallel questions must not read the other 999. The task id leaves the encoded record for a
    // column the index serves (rows written before keep their copy; the column wins on read).
    sql: (s) => `
      ALTER TABLE ${s}.interrupts ADD COLUMN task_id text NOT NULL DEFAULT '';
      UPDATE ${s}.interrupts SET task_id = coalesce(record::jsonb ->> 'taskId', '');
      CREATE INDEX interrupts_by_task ON ${s}.interrupts (thread_id, task_id);
    `,
  },
  {
    version: 5,
    name: "interrupts by root graph",
    // The queue's app filter matches the root graph of the run tree, so filtering by the app lists
    // its sub-agents' questions too; `graph` stays the asking run's own graph. Rows written before
    // take the root from their encoded path (`up` above the asking task, or a whole `path` of
    // an older encoding); a row with neither asked in the root run, whose graph is the root.
    sql: (s) => `
      ALTER TABLE ${s}.interrupts ADD COLUMN root_graph text NOT NULL DEFAULT '';
      UPDATE ${s}.interrupts SET root_graph = coalesce(
        record::jsonb -> 'up' -> 0 ->> 'graph', record::jsonb -> 'path' -> 0 ->> 'graph', graph);
      CREATE INDEX interrupts_by_root_graph
        ON ${s}.interrupts (root_graph, status, created_at DESC, id DESC);
    `,
  },
  {
    version: 6,
    name: "one round trip per phase of a call",
    sql: (s) => ONE_ROUND_TRIP_FUNCTIONS(s),
  },
  {
    version: 7,
    name: "approval policies",
    sql: (s) => approvalFunctions(s),
  },
  {
    version: 8,
    name: "audit hash chain",
    sql: (s) => auditChainMigration(s, KEY),
  },
  {
    version: 9,
    name: "webhook outbox",
    sql: (s) => WEBHOOK_SCHEMA(s),
  },
  {
    version: 10,
    name: "escalation ladder",
    sql: (s) => LADDER_SCHEMA(s),
  },
  {
    version: 11,
    name: "thread graph column",
    sql: (s) => THREAD_GRAPH_COLUMN(s),
  },
  {
    version: 12,
    name: "where the audit chain began",
    sql: (s) => auditLegacyUntilMigration(s),
  },
  {
    version: 13,
    name: "logged leases",
    // Migration 2 made leases unlogged, on the grounds that a lease dies with its server. A
    // promoted replica outlives the server, though, and found the table empty: every run was
    // free for the taking while its holder, reconnected, still ran it, so its step ran twice;
    // and a lease taken just before the crash wrote no WAL, so its token could be handed out
    // again. Logged, a lease and its token reach the replica with the commit that took it, and
    // the holder goes on after a failover. Cost: a WAL flush when a lease is taken and released.
    sql: (s) => `ALTER TABLE ${s}.leases SET LOGGED`,
  },
  {
    version: 14,
    name: "api keys",
    sql: (s) => API_KEYS_SCHEMA(s),
  },
  {
    version: 15,
    name: "queue indexes of pending rows",
    sql: (s) => PENDING_QUEUE_INDEXES(s),
  },
  {
    version: 16,
    name: "side records",
    sql: (s) => SIDE_RECORDS(s),
  },
  {
    version: 17,
    name: "side records from once slots",
    // What an earlier server kept in once slots becomes the side records the server reads now,
    // so it no longer looks in both (see legacy-side-records.ts).
    sql: (s) => LEGACY_SIDE_RECORDS(s),
  },
];

/**
 * A thread's pending interrupts in queue order, from an index of their own: every call counts
 * them, and a pause or an answer reads the oldest. Without it the planner may AND the thread's
 * index with the queue's `status` index and read every pending row of every thread (measured: 12
 * ms for one thread's page among 20,000 paused threads, on tables not yet analyzed).
 */
const PENDING_BY_THREAD = (s: string): string => `
  CREATE INDEX interrupts_pending_by_thread ON ${s}.interrupts (thread_id, created_at, seq)
    WHERE status = 'pending';
`;

/**
 * `thread_head`: what a call reads first (getThreadHead). Migration 11 replaces it to read the
 * thread's `graph` column too; migration 5 keeps its text.
 */
const THREAD_HEAD = (s: string, create = "CREATE", graph = ""): string => `
  ${create} FUNCTION ${s}.thread_head(p_thread text, p_stream text, p_known text) RETURNS json
  LANGUAGE plpgsql STABLE AS $fn$
  DECLARE c ${s}.checkpoints%ROWTYPE;
  BEGIN
    SELECT k.* INTO c FROM ${s}.heads h
      JOIN ${s}.checkpoints k
        ON k.thread_id = h.thread_id AND k.stream = h.stream AND k.id = h.checkpoint_id
      WHERE h.thread_id = p_thread AND h.stream = p_stream;
    RETURN json_build_object(
      'checkpoint', CASE WHEN c.id IS NULL OR c.id = p_known THEN NULL ELSE row_to_json(c) END,
      'head_id', c.id,
      'run', (SELECT row_to_json(r) FROM (
          SELECT run_id, thread_id, created_at, updated_at, status, record FROM ${s}.runs
          WHERE run_id = c.run_id) r),
      'thread', (SELECT row_to_json(t) FROM (
          SELECT thread_id, tenant, created_at, updated_at, metadata${graph} FROM ${s}.threads
          WHERE thread_id = p_thread) t),
      'pending', (SELECT count(*)::int FROM ${s}.interrupts
          WHERE thread_id = p_thread AND status = 'pending'),
      'steering', (SELECT coalesce(json_agg(record ORDER BY seq), '[]') FROM ${s}.steering
          WHERE thread_id = p_thread));
  END $fn$;
`;

/**
 * Migration 11: the graph a thread runs becomes a column. It was a hidden `"rein:graph"` key of the
 * thread's metadata; every row that has the key gets the column from it and loses the key (the
 * other keys keep their order), so no reader ever needs to look in the metadata for it. Metadata
 * is the serializer's JSON (a top-level object with a `__rein` key of its own is escaped as
 * `{"__rein":"obj","v":…}`: both forms); text that is not JSON is left as it is.
 */
const THREAD_GRAPH_COLUMN = (s: string): string => `
  ALTER TABLE ${s}.threads ADD COLUMN graph text;
  CREATE FUNCTION pg_temp.rein_graph_split(doc text, OUT graph text, OUT rest text)
  LANGUAGE plpgsql AS $fn$
  DECLARE j json; m json; escaped boolean;
  BEGIN
    BEGIN j := doc::json; EXCEPTION WHEN others THEN RETURN; END;
    IF json_typeof(j) <> 'object' THEN RETURN; END IF;
    escaped := coalesce(j ->> '__rein' = 'obj' AND json_typeof(j -> 'v') = 'object', false);
    m := CASE WHEN escaped THEN j -> 'v' ELSE j END;
    IF json_typeof(m -> 'rein:graph') IS DISTINCT FROM 'string' THEN RETURN; END IF;
    graph := m ->> 'rein:graph';
    m := (SELECT coalesce(json_object_agg(e.key, e.value ORDER BY e.n), '{}'::json)
          FROM json_each(m) WITH ORDINALITY AS e (key, value, n) WHERE e.key <> 'rein:graph');
    rest := CASE WHEN escaped THEN json_build_object('__rein', 'obj', 'v', m)::text
                 ELSE m::text END;
  END $fn$;
  UPDATE ${s}.threads t SET graph = x.graph, metadata = x.rest
    FROM (SELECT thread_id, (pg_temp.rein_graph_split(metadata)).* FROM ${s}.threads) x
    WHERE x.thread_id = t.thread_id AND x.graph IS NOT NULL;
  DROP FUNCTION pg_temp.rein_graph_split(text);
  ${THREAD_HEAD(s, "CREATE OR REPLACE", ", graph")}
`;

/** `interrupt_json`: an interrupt row as the store reads it (its INTERRUPT_COLUMNS). */
const INTERRUPT_JSON = (s: string): string => `
  CREATE FUNCTION ${s}.interrupt_json(i ${s}.interrupts) RETURNS json
  LANGUAGE sql IMMUTABLE AS $fn$
    SELECT json_build_object('id', i.id, 'thread_id', i.thread_id, 'run_id', i.run_id,
      'task_id', i.task_id, 'graph', i.graph, 'tenant', i.tenant, 'status', i.status,
      'created_at', i.created_at, 'deadline', i.deadline, 'answer', i.answer,
      'answered_by', i.answered_by, 'answered_at', i.answered_at, 'record', i.record)
  $fn$;
`;

/** `lease_and_read`: the lease as acquireLease takes it, then the call's first reads. */
const LEASE_AND_READ = (s: string): string => `
  CREATE FUNCTION ${s}.lease_and_read(p_thread text, p_owner text, p_ttl_ms integer,
    p_known text, p_request text, p_pending_limit integer, p_ids text[], p_run text)
  RETURNS json LANGUAGE plpgsql AS $fn$
  DECLARE tok bigint;
  BEGIN
    INSERT INTO ${s}.leases AS l (thread_id, owner, expires_at, token)
    VALUES (p_thread, p_owner, clock_timestamp() + p_ttl_ms * interval '1 millisecond',
      nextval('${s}.lease_tokens'))
    ON CONFLICT (thread_id) DO UPDATE SET owner = EXCLUDED.owner,
      expires_at = EXCLUDED.expires_at, token = nextval('${s}.lease_tokens')
    WHERE l.owner = EXCLUDED.owner OR l.expires_at <= clock_timestamp()
    RETURNING token INTO tok;
    IF tok IS NULL THEN RETURN NULL; END IF;
    RETURN json_build_object(
      'token', tok,
      'head', ${s}.thread_head(p_thread, '', p_known),
      'request', (SELECT json_build_object('result', result) FROM ${s}.requests
          WHERE p_request IS NOT NULL AND request_id = p_request),
      'pending', CASE WHEN p_pending_limit IS NOT NULL THEN json_build_object(
          'total', (SELECT count(*)::int FROM ${s}.interrupts
              WHERE thread_id = p_thread AND status = 'pending'),
          'items', (SELECT coalesce(json_agg(${s}.interrupt_json(p) ORDER BY p.created_at, p.seq), '[]')
              FROM (SELECT * FROM ${s}.interrupts WHERE thread_id = p_thread
                AND status = 'pending' ORDER BY created_at, seq LIMIT p_pending_limit) p)) END,
      'interrupts', CASE WHEN p_ids IS NOT NULL THEN (
          SELECT coalesce(json_agg(${s}.interrupt_json(i)), '[]') FROM ${s}.interrupts i
          WHERE id = ANY (p_ids)) END,
      'run', (SELECT row_to_json(r) FROM (
          SELECT run_id, thread_id, created_at, updated_at, status, record FROM ${s}.runs
          WHERE p_run IS NOT NULL AND run_id = p_run) r),
      'run_pending', CASE WHEN p_run IS NOT NULL THEN (
          SELECT coalesce(json_agg(${s}.interrupt_json(i) ORDER BY i.created_at DESC, i.id DESC),
            '[]')
          FROM (SELECT * FROM ${s}.interrupts WHERE thread_id = p_thread AND run_id = p_run
            AND status = 'pending' ORDER BY created_at DESC, id DESC LIMIT 1000) i) END);
  END $fn$;
`;

/** `answer_batch`: the checked answer write, then (asked, and applied) the continuation's reads. */
const ANSWER_BATCH = (s: string): string => `
  CREATE FUNCTION ${s}.answer_batch(text, text, text, text, text[], text[], text[], text, text,
    text[], text[], text[], text[], text[], text[], bigint,
    p_known text, p_channels text[], p_versions text[], p_links integer[], p_task_ids text[])
  RETURNS json LANGUAGE plpgsql AS $fn$
  DECLARE w record;
  BEGIN
    -- The checked write: $1 thread, $2 request id, $3 head stream, $4 expected head, $5 ids,
    -- $6 statuses, $7 answers, $8 actor, $9 time, $10 planned run ids, $11..$13 wake arrays,
    -- $14 audit records, $15 runs to resume, $16 fencing token.
    WITH fence AS (
      SELECT token FROM ${s}.leases WHERE $16 IS NOT NULL AND thread_id = $1 FOR SHARE
    ), head AS (
      SELECT checkpoint_id FROM ${s}.heads
      WHERE $3 IS NOT NULL AND thread_id = $1 AND stream = $3 FOR SHARE
    ), locked AS (
      SELECT id, status, run_id FROM ${s}.interrupts WHERE id = ANY ($5) ORDER BY id FOR UPDATE
    ), seen AS (
      SELECT result FROM ${s}.requests WHERE $2 IS NOT NULL AND request_id = $2
    ), checks AS (
      SELECT ($16 IS NULL OR EXISTS (SELECT 1 FROM fence WHERE token = $16))
        AND ($3 IS NULL OR (SELECT checkpoint_id FROM head) IS NOT DISTINCT FROM $4)
        AND NOT EXISTS (SELECT 1 FROM seen)
        AND (SELECT count(*) FROM locked l
             JOIN unnest($5, $10) AS e (id, run_id) ON l.id = e.id AND l.run_id = e.run_id
             WHERE l.status = 'pending') = cardinality($5) AS ok
    ), claim AS (
      INSERT INTO ${s}.requests (request_id, thread_id)
      SELECT $2, $1 WHERE $2 IS NOT NULL AND (SELECT ok FROM checks)
      ON CONFLICT DO NOTHING RETURNING 1
    ), go AS (
      SELECT 1 AS go WHERE (SELECT ok FROM checks)
        AND ($2 IS NULL OR EXISTS (SELECT 1 FROM claim))
    ), resolved AS (
      UPDATE ${s}.interrupts AS i SET
        status = u.status,
        answer = CASE WHEN u.status = 'answered' THEN u.answer ELSE i.answer END,
        answered_by = CASE WHEN u.status = 'answered' THEN $8 ELSE i.answered_by END,
        answered_at = CASE WHEN u.status = 'answered' THEN $9 ELSE i.answered_at END
      FROM unnest($5, $6, $7) AS u (id, status, answer)
      WHERE i.id = u.id AND i.status = 'pending' AND EXISTS (SELECT 1 FROM go)
    ), woken AS (
      DELETE FROM ${s}.task_results t
      USING unnest($11, $12, $13) AS x (stream, checkpoint_id, task_id)
      WHERE t.thread_id = $1 AND t.stream = x.stream AND t.checkpoint_id = x.checkpoint_id
        AND t.task_id = x.task_id AND t.kind = 'paused' AND EXISTS (SELECT 1 FROM go)
    ), audit AS (
      INSERT INTO ${s}.audit (thread_id, record)
      SELECT $1, a.record FROM unnest($14) WITH ORDINALITY AS a (record, n)
      WHERE EXISTS (SELECT 1 FROM go) ORDER BY a.n
    ), resumed AS (
      UPDATE ${s}.runs SET status = 'running', updated_at = $9
      WHERE run_id = ANY ($15) AND status = 'interrupted' AND EXISTS (SELECT 1 FROM go)
    )
    SELECT EXISTS (SELECT 1 FROM go) AS applied,
      (SELECT ok FROM checks) AS checked,
      (SELECT token FROM fence) AS current_token,
      EXISTS (SELECT 1 FROM seen) AS seen,
      (SELECT result FROM seen) AS seen_result,
      (SELECT checkpoint_id FROM head) AS head,
      (SELECT json_agg(json_build_array(id, status, run_id)) FROM locked) AS interrupts
    INTO w;
    -- The continuation's first reads at the root head p_known, after the answer: the head, the
    -- channel ranges of its versions, its step's result kinds, its tasks' interrupt rows.
    RETURN json_build_object(
      'applied', w.applied, 'checked', w.checked, 'current_token', w.current_token,
      'seen', w.seen, 'seen_result', w.seen_result, 'head', w.head, 'interrupts', w.interrupts,
      'reads', CASE WHEN w.applied AND p_known IS NOT NULL THEN json_build_object(
        'head', ${s}.thread_head($1, '', p_known),
        'chains', (SELECT coalesce(json_agg(json_build_object('channel', x.channel,
              'version', b.version, 'kind', b.kind, 'prev', b.prev, 'value', b.value)), '[]')
            FROM unnest(p_channels, p_versions, p_links) AS x (channel, version, links)
            CROSS JOIN LATERAL (
              SELECT version, kind, prev, value FROM ${s}.blobs b
              WHERE b.thread_id = $1 AND b.stream = '' AND b.channel = x.channel
                AND b.version <= x.version
              ORDER BY b.version DESC LIMIT x.links) b),
        'kinds', (SELECT coalesce(json_agg(json_build_array(task_id, kind) ORDER BY seq), '[]')
            FROM ${s}.task_results
            WHERE thread_id = $1 AND stream = '' AND checkpoint_id = p_known),
        'tasks', CASE WHEN p_task_ids IS NOT NULL THEN (
            SELECT coalesce(json_agg(${s}.interrupt_json(i) ORDER BY i.created_at, i.seq), '[]')
            FROM ${s}.interrupts i WHERE thread_id = $1 AND task_id = ANY (p_task_ids)) END) END);
  END $fn$;
`;

/**
 * Migration 5: server-side functions that make each phase of a call one round trip (see
 * docs/storage.md, "What one call costs"). The statements of a VOLATILE plpgsql function each
 * take a fresh snapshot, so reads after the lease see every write an earlier holder committed,
 * and reads after the answer see the answer. Their plans are cached per connection.
 *
 * - `interrupts_pending_by_thread`: the index the pending count and page read.
 * - `thread_head`: what a call reads first (getThreadHead).
 * - `lease_and_read`: takes the lease as acquireLease does, then makes the call's first reads.
 * - `answer_batch`: the checked answer write of answerInterrupts (one statement, as before), then,
 *   when it applied and the caller asked, the continuation's first reads.
 * - `task_outcome`: putTaskOutcome's statement, then, when asked, the thread's pending page (the
 *   run result of a pause).
 */
const ONE_ROUND_TRIP_FUNCTIONS = (s: string): string =>
  [PENDING_BY_THREAD, THREAD_HEAD, INTERRUPT_JSON, LEASE_AND_READ, ANSWER_BATCH, TASK_OUTCOME]
    .map((fn) => fn(s))
    .join("\n");

/** The newest schema version this code knows. */
export const SCHEMA_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

/** Quotes a schema name for SQL, refusing names that would need more than plain quoting. */
export function quoteSchema(schema: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
    throw new Error(
      `Invalid Postgres schema name ${JSON.stringify(schema)}: use letters, digits and _.`,
    );
  }
  return `"${schema}"`;
}

/**
 * Brings `schema` to the newest version of `migrations`, creating it if needed.
 *
 * @returns the versions applied by this call (empty when already current).
 * @throws {SchemaVersionError} when the schema is newer than `migrations` know.
 */
export async function migrate(
  pool: Pool,
  schema: string,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  const s = quoteSchema(schema);
  const known = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  const client = await guarded(() => pool.connect());
  // A connection dropped while checked out emits 'error' on the client; unheard, that kills
  // the process. The query in flight rejects as well, which is what the caller sees.
  let broken: Error | undefined;
  const onError = (error: Error): void => {
    broken = error;
  };
  client.on("error", onError);
  try {
    await client.query("BEGIN");
    // Held until COMMIT/ROLLBACK: concurrent migrators of this schema wait here, then find the
    // work done. Other schemas use other keys and do not wait.
    await client.query("SELECT pg_advisory_xact_lock(hashtext('rein.migrate'), hashtext($1))", [
      schema,
    ]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.schema_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const current = await client.query<{ version: number | null }>(
      `SELECT max(version) AS version FROM ${s}.schema_migrations`,
    );
    const version = current.rows[0]?.version ?? 0;
    if (version > known) throw new SchemaVersionError(version, known);
    const applied: number[] = [];
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (migration.version <= version) continue;
      await client.query(migration.sql(s));
      await client.query(`INSERT INTO ${s}.schema_migrations (version, name) VALUES ($1, $2)`, [
        migration.version,
        migration.name,
      ]);
      applied.push(migration.version);
    }
    await client.query("COMMIT");
    return applied;
  } catch (error) {
    // A rollback on a dead connection fails too; the first error is the one to report.
    await client.query("ROLLBACK").catch((rollback: unknown) => {
      broken ??= rollback instanceof Error ? rollback : new Error(String(rollback));
    });
    throw storeError(error);
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}

/** The schema version recorded in `schema` (0 when it has none). */
export async function schemaVersion(pool: Pool, schema: string): Promise<number> {
  const exists = await pool.query<{ table: string | null }>("SELECT to_regclass($1) AS table", [
    `${quoteSchema(schema)}.schema_migrations`,
  ]);
  if (!exists.rows[0]?.table) return 0;
  const result = await pool.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${quoteSchema(schema)}.schema_migrations`,
  );
  return result.rows[0]?.version ?? 0;
}
