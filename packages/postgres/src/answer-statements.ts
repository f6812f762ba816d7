/**
 * The two statements of `answerInterrupts` on Postgres: a plain read of what the planner needs,
 * then one write statement that re-checks all of it under row locks and applies the plan, so an
 * answer costs two round trips and one commit whatever the thread holds.
 */
import { fenceCte, fenceOk, type Named } from "./fragments.ts";

/** The answer statements for the quoted schema `s`. */
export function answerStatements(s: string, named: (name: string, text: string) => Named) {
  return {
    /**
     * What the planner reads, unlocked: the fencing token, the stored request, the head and the
     * targeted interrupts (by primary key). $1 thread, $2 request id, $3 head stream, $4 ids.
     */
    answerRead: named(
      "answer_read",
      `SELECT
         (SELECT token FROM ${s}.leases WHERE thread_id = $1) AS current_token,
         EXISTS (SELECT 1 FROM ${s}.requests WHERE request_id = $2) AS seen,
         (SELECT result FROM ${s}.requests WHERE request_id = $2) AS seen_result,
         (SELECT checkpoint_id FROM ${s}.heads WHERE thread_id = $1 AND stream = $3) AS head,
         (SELECT json_agg(json_build_array(id, status, run_id)) FROM ${s}.interrupts
          WHERE id = ANY ($4::text[])) AS interrupts`,
    ),

    /**
     * The planned writes, applied only if every check still holds under locks: the lease
     * (share-locked), the head (share-locked), the targeted interrupts (locked in id order, so
     * overlapping batches cannot deadlock; each still pending and of the planned run) and the
     * request id (claimed only when everything else holds, so a refused batch never consumes
     * it). Returns what it found, so a lost race is reported without another read.
     * $1 thread, $2 request id, $3 head stream, $4 expected head, $5 ids, $6 statuses,
     * $7 answers, $8 actor, $9 time, $10 planned run ids, $11..$13 wake arrays, $14 audit
     * records, $15 ids of the runs to resume (interrupted → running), $16 fencing token.
     */
    answerWrite: named(
      "answer_write",
      `WITH ${fenceCte(s, 16)}, head AS (
         SELECT checkpoint_id FROM ${s}.heads
         WHERE $3::text IS NOT NULL AND thread_id = $1 AND stream = $3 FOR SHARE
       ), locked AS (
         SELECT id, status, run_id FROM ${s}.interrupts WHERE id = ANY ($5::text[])
         ORDER BY id FOR UPDATE
       ), seen AS (
         SELECT result FROM ${s}.requests WHERE $2::text IS NOT NULL AND request_id = $2
       ), checks AS (
         SELECT ${fenceOk(16)}
           AND ($3::text IS NULL OR (SELECT checkpoint_id FROM head) IS NOT DISTINCT FROM $4)
           AND NOT EXISTS (SELECT 1 FROM seen)
           AND (SELECT count(*) FROM locked l
                JOIN unnest($5::text[], $10::text[]) AS e (id, run_id)
                  ON l.id = e.id AND l.run_id = e.run_id
                WHERE l.status = 'pending') = cardinality($5::text[]) AS ok
       ), claim AS (
         INSERT INTO ${s}.requests (request_id, thread_id)
         SELECT $2, $1 WHERE $2::text IS NOT NULL AND (SELECT ok FROM checks)
         ON CONFLICT DO NOTHING RETURNING 1
       ), go AS (
         SELECT 1 AS go WHERE (SELECT ok FROM checks)
           AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM claim))
       ), resolved AS (
         UPDATE ${s}.interrupts AS i SET
           status = u.status,
           answer = CASE WHEN u.status = 'answered' THEN u.answer ELSE i.answer END,
           answered_by = CASE WHEN u.status = 'answered' THEN $8 ELSE i.answered_by END,
           answered_at = CASE WHEN u.status = 'answered' THEN $9 ELSE i.answered_at END
         FROM unnest($5::text[], $6::text[], $7::text[]) AS u (id, status, answer)
         WHERE i.id = u.id AND i.status = 'pending' AND EXISTS (SELECT 1 FROM go)
       ), woken AS (
         DELETE FROM ${s}.task_results t
         USING unnest($11::text[], $12::text[], $13::text[]) AS w (stream, checkpoint_id, task_id)
         WHERE t.thread_id = $1 AND t.stream = w.stream AND t.checkpoint_id = w.checkpoint_id
           AND t.task_id = w.task_id AND t.kind = 'paused' AND EXISTS (SELECT 1 FROM go)
       ), audit AS (
         INSERT INTO ${s}.audit (thread_id, record)
         SELECT $1, a.record FROM unnest($14::text[]) WITH ORDINALITY AS a (record, n)
         WHERE EXISTS (SELECT 1 FROM go) ORDER BY a.n
       ), resumed AS (
         UPDATE ${s}.runs SET status = 'running', updated_at = $9
         WHERE run_id = ANY ($15::text[]) AND status = 'interrupted'
           AND EXISTS (SELECT 1 FROM go)
       )
       SELECT EXISTS (SELECT 1 FROM go) AS applied,
         (SELECT ok FROM checks) AS checked,
         (SELECT token FROM fence) AS current_token,
         EXISTS (SELECT 1 FROM seen) AS seen,
         (SELECT result FROM seen) AS seen_result,
         (SELECT checkpoint_id FROM head) AS head,
         (SELECT json_agg(json_build_array(id, status, run_id)) FROM locked) AS interrupts`,
    ),
  };
}
