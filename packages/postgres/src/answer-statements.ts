/**
 * The two statements of `answerInterrupts` on Postgres: a plain read of what the planner needs,
 * then one write statement that re-checks all of it under row locks and applies the plan, so an
 * answer costs two round trips and one commit whatever the thread holds.
 */
import type { Named } from "./fragments.ts";

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
         (SELECT json_agg(json_build_array(id, status, run_id, policy, approvals))
          FROM ${s}.interrupts WHERE id = ANY ($4::text[])) AS interrupts`,
    ),

    /**
     * The planned writes (`answer_batch`, migration 5), applied only if every check still holds
     * under locks: the lease (share-locked), the head (share-locked), the targeted interrupts
     * (locked in id order, so overlapping batches cannot deadlock; each still pending and of the
     * planned run) and the request id (claimed only when everything else holds, so a refused
     * batch never consumes it). Returns what it found, so a lost race is reported without
     * another read; when it applied and `$17` names the root head, the continuation's first
     * reads after the answer in the same round trip.
     * $1 thread, $2 request id, $3 head stream, $4 expected head, $5 ids, $6 statuses,
     * $7 answers, $8 actor, $9 time, $10 planned run ids, $11..$13 wake arrays, $14 audit
     * records, $15 ids of the runs to resume (interrupted → running), $16 fencing token,
     * $17 known root head, $18..$20 its channels, versions and chain lengths, $21 its task ids;
     * migration 7: $22 the approvals that applied each answer (parallel to $5), $23..$24 the
     * ids that only gain an approval and their new approvals, $25..$27 every target's policy and
     * approvals as planned from (the write refuses if a row's differ).
     */
    answerWrite: named(
      "answer_write",
      `SELECT ${s}.answer_batch(${Array.from({ length: 27 }, (_, i) => `$${i + 1}`).join(", ")}) AS r`,
    ),
  };
}
