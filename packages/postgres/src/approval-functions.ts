/**
 * The SQL functions of migration 7 (approval policies), and the task-outcome function both
 * migration 6 and 7 create: an interrupt row gains its approval policy (resolved when the
 * question was raised) and the approvals gathered so far; `answer_batch` re-checks both under
 * the rows' locks and records partial approvals beside the answers it applies, so a policy is
 * enforced inside the answer's transaction and N concurrent approvers count exactly.
 */
import { interruptUpsert } from "./fragments.ts";

/**
 * `task_outcome`: a task's outcome (putTaskOutcome), then (asked) the pending page after it.
 * From migration 7 (`policies`) it also takes the interrupts' approval policies, last; from
 * migration 10 (`ladder`) a question raised again keeps the ladder step it reached.
 */
export const TASK_OUTCOME = (s: string, policies = false, ladder = false): string => `
  CREATE FUNCTION ${s}.task_outcome(text, text, text, text, text, text,
    text[], text[], text[], text[], text[], text[], text[], text[], text[], text[], text[],
    text[], text[], text[], bigint, text[], text[], text[], text[], text[], text[], text[],
    boolean, text[], p_page_limit integer${policies ? ", p_policies text[]" : ""})
  RETURNS json LANGUAGE plpgsql AS $fn$
  DECLARE w record;
  BEGIN
    -- $1..$6 result, $7..$19 interrupt arrays, $20 superseded ids, $21 fencing token,
    -- $22..$28 run arrays (stored only with an applied result), $29 release the lease,
    -- $30 the interrupts' root graphs.
    WITH fence AS (
      SELECT token FROM ${s}.leases WHERE $21 IS NOT NULL AND thread_id = $1 FOR SHARE
    ), result AS (
      INSERT INTO ${s}.task_results AS t (thread_id, stream, checkpoint_id, task_id, kind, value)
      SELECT $1, $2, $3, $4, $5, $6
      WHERE ($21 IS NULL OR EXISTS (SELECT 1 FROM fence WHERE token = $21))
      ON CONFLICT (thread_id, stream, checkpoint_id, task_id)
      DO UPDATE SET kind = EXCLUDED.kind, value = EXCLUDED.value
      WHERE t.kind <> 'writes'
      RETURNING 1
    ), interrupts AS (
      ${interruptUpsert(s, 7, 30, "EXISTS (SELECT 1 FROM result)", policies ? "p_policies" : undefined, ladder)}
    ), superseded AS (
      -- Answered ones too: an answer to an old question must never apply to a new one.
      UPDATE ${s}.interrupts SET status = 'superseded'
      WHERE id = ANY ($20) AND status IN ('pending', 'answered') AND EXISTS (SELECT 1 FROM result)
    ), runs AS (
      INSERT INTO ${s}.runs AS r (run_id, thread_id, created_at, updated_at, status, root, record)
      SELECT u.run_id, u.thread_id, u.created_at, u.updated_at, u.status, u.root::boolean,
        u.record
      FROM unnest($22, $23, $24, $25, $26, $27, $28)
        AS u (run_id, thread_id, created_at, updated_at, status, root, record)
      WHERE EXISTS (SELECT 1 FROM result)
      ON CONFLICT (run_id) DO UPDATE SET
        thread_id = EXCLUDED.thread_id, created_at = EXCLUDED.created_at,
        updated_at = EXCLUDED.updated_at, status = EXCLUDED.status, root = EXCLUDED.root,
        record = EXCLUDED.record
      WHERE r.status NOT IN ('done', 'cancelled')
    ), released AS (
      UPDATE ${s}.leases SET expires_at = '-infinity'
      WHERE $29 AND thread_id = $1 AND token = $21
        AND ($21 IS NULL OR EXISTS (SELECT 1 FROM fence WHERE token = $21))
    )
    SELECT (SELECT count(*)::int FROM result) AS applied,
      (SELECT token FROM fence) AS current_token
    INTO w;
    -- The thread's oldest pending interrupts and their count, read after the outcome (as
    -- getPendingInterrupts), when asked and the fence held.
    RETURN json_build_object('applied', w.applied, 'current_token', w.current_token,
      'page', CASE WHEN p_page_limit IS NOT NULL AND ($21 IS NULL OR w.current_token = $21)
        THEN json_build_object(
          'total', (SELECT count(*)::int FROM ${s}.interrupts
              WHERE thread_id = $1 AND status = 'pending'),
          'items', (SELECT coalesce(json_agg(${s}.interrupt_json(p) ORDER BY p.created_at, p.seq), '[]')
              FROM (SELECT * FROM ${s}.interrupts WHERE thread_id = $1 AND status = 'pending'
                ORDER BY created_at, seq LIMIT p_page_limit) p)) END);
  END $fn$;
`;

/** `interrupt_json` with the approval columns (its INTERRUPT_COLUMNS from migration 7). */
const INTERRUPT_JSON_7 = (s: string): string => `
  CREATE OR REPLACE FUNCTION ${s}.interrupt_json(i ${s}.interrupts) RETURNS json
  LANGUAGE sql IMMUTABLE AS $fn$
    SELECT json_build_object('id', i.id, 'thread_id', i.thread_id, 'run_id', i.run_id,
      'task_id', i.task_id, 'graph', i.graph, 'tenant', i.tenant, 'status', i.status,
      'created_at', i.created_at, 'deadline', i.deadline, 'answer', i.answer,
      'answered_by', i.answered_by, 'answered_at', i.answered_at, 'record', i.record,
      'policy', i.policy, 'approvals', i.approvals)
  $fn$;
`;

/**
 * `answer_batch` of migration 7: as migration 6's, and besides it locks the rows that only gain
 * an approval, refuses the batch when any targeted row's policy or approvals differ from what the
 * plan was made from (`p_guard_*`), writes the approvals that applied an answer
 * (`p_answer_approvals`, parallel to `$5`) and the partial ones (`p_approve_*`).
 */
const ANSWER_BATCH_7 = (s: string): string => `
  CREATE FUNCTION ${s}.answer_batch(text, text, text, text, text[], text[], text[], text, text,
    text[], text[], text[], text[], text[], text[], bigint,
    p_known text, p_channels text[], p_versions text[], p_links integer[], p_task_ids text[],
    p_answer_approvals text[], p_approve_ids text[], p_approve_values text[],
    p_guard_ids text[], p_guard_policies text[], p_guard_approvals text[])
  RETURNS json LANGUAGE plpgsql AS $fn$
  DECLARE w record;
  BEGIN
    WITH fence AS (
      SELECT token FROM ${s}.leases WHERE $16 IS NOT NULL AND thread_id = $1 FOR SHARE
    ), head AS (
      SELECT checkpoint_id FROM ${s}.heads
      WHERE $3 IS NOT NULL AND thread_id = $1 AND stream = $3 FOR SHARE
    ), locked AS (
      SELECT id, status, run_id, policy, approvals FROM ${s}.interrupts
      WHERE id = ANY ($5 || p_approve_ids) ORDER BY id FOR UPDATE
    ), seen AS (
      SELECT result FROM ${s}.requests WHERE $2 IS NOT NULL AND request_id = $2
    ), checks AS (
      SELECT ($16 IS NULL OR EXISTS (SELECT 1 FROM fence WHERE token = $16))
        AND ($3 IS NULL OR (SELECT checkpoint_id FROM head) IS NOT DISTINCT FROM $4)
        AND NOT EXISTS (SELECT 1 FROM seen)
        AND (SELECT count(*) FROM locked l
             JOIN unnest($5, $10) AS e (id, run_id) ON l.id = e.id AND l.run_id = e.run_id
             WHERE l.status = 'pending') = cardinality($5)
        AND (SELECT count(*) FROM locked l
             WHERE l.id = ANY (p_approve_ids) AND l.status = 'pending') = cardinality(p_approve_ids)
        AND NOT EXISTS (SELECT 1 FROM locked l
             JOIN unnest(p_guard_ids, p_guard_policies, p_guard_approvals)
               AS g (id, policy, approvals) ON l.id = g.id
             WHERE l.policy IS DISTINCT FROM g.policy
               OR l.approvals IS DISTINCT FROM g.approvals) AS ok
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
        answered_at = CASE WHEN u.status = 'answered' THEN $9 ELSE i.answered_at END,
        approvals = coalesce(u.approvals, i.approvals)
      FROM unnest($5, $6, $7, p_answer_approvals) AS u (id, status, answer, approvals)
      WHERE i.id = u.id AND i.status = 'pending' AND EXISTS (SELECT 1 FROM go)
    ), approved AS (
      UPDATE ${s}.interrupts AS i SET approvals = a.approvals
      FROM unnest(p_approve_ids, p_approve_values) AS a (id, approvals)
      WHERE i.id = a.id AND i.status = 'pending' AND EXISTS (SELECT 1 FROM go)
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
      (SELECT json_agg(json_build_array(id, status, run_id, policy, approvals)) FROM locked)
        AS interrupts
    INTO w;
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
 * Migration 7: the `policy` and `approvals` columns (NULL on older rows: no policy), and the
 * functions that read or write them, replaced in place.
 */
export function approvalFunctions(s: string): string {
  return `
    ALTER TABLE ${s}.interrupts ADD COLUMN policy text;
    ALTER TABLE ${s}.interrupts ADD COLUMN approvals text;
    ${INTERRUPT_JSON_7(s)}
    DROP FUNCTION ${s}.answer_batch(text, text, text, text, text[], text[], text[], text, text,
      text[], text[], text[], text[], text[], text[], bigint, text, text[], text[], integer[],
      text[]);
    ${ANSWER_BATCH_7(s)}
    DROP FUNCTION ${s}.task_outcome(text, text, text, text, text, text,
      text[], text[], text[], text[], text[], text[], text[], text[], text[], text[], text[],
      text[], text[], text[], bigint, text[], text[], text[], text[], text[], text[], text[],
      boolean, text[], integer);
    ${TASK_OUTCOME(s, true)}
  `;
}
