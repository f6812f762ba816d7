/**
 * The step commit of the Postgres store: one statement (one round trip, one commit) whose CTEs
 * check the fence, move the head by compare-and-set and write everything the commit carries.
 */
import type pg from "pg";
import type { CheckpointId } from "@rein/core";
import { checkFence, conflictError, type StepCommit } from "@rein/core/store";
import type { RowCodec } from "./codec.ts";
import { checked, guarded, storeError } from "./connection.ts";
import type { Statements } from "./statements.ts";

/**
 * Commits `commit` on `pool`.
 *
 * @throws {CheckpointConflictError} when the head moved or the checkpoint id exists.
 * @throws {FencedOutError} when the fence is stale.
 */
export async function commitStep(
  pool: pg.Pool,
  sql: Statements,
  codec: RowCodec,
  commit: StepCommit,
): Promise<void> {
  const { checkpoint: cp, expectedHeadId } = commit;
  const values = [
    cp.threadId,
    cp.stream,
    cp.id,
    expectedHeadId,
    ...codec.checkpointParams(cp),
    ...codec.blobArrays(commit.blobs),
    ...codec.interruptArrays(commit.interrupts ?? []),
    ...codec.runArrays(commit.runs ?? []),
    commit.fence?.token ?? null,
    ...codec.taskArrays(commit.taskResults ?? []),
    ...codec.threadParams(commit.thread),
    ...codec.auditArrays(commit.audit ?? []),
    commit.releaseLease === true,
    codec.interruptRootGraphs(commit.interrupts ?? []),
    codec.interruptPolicies(commit.interrupts ?? []),
    codec.threadGraph(commit.thread),
  ];
  let ok: number;
  try {
    const result = await pool.query<{ ok: number; current_token: string | null }>(
      checked(sql.commitStep, values),
    );
    const row = result.rows[0];
    ok = row?.ok ?? 0;
    if (ok !== 1 && commit.fence)
      checkFence(commit.fence, row?.current_token == null ? null : Number(row.current_token));
  } catch (error) {
    // The checkpoint id exists already: as much a lost race as a moved head.
    if (!isUniqueViolation(error, "checkpoints_pkey")) throw storeError(error);
    ok = 0;
  }
  if (ok === 1) return;
  // Read the head afresh: the statement's snapshot may predate the commit that beat us.
  const head = await guarded(() =>
    pool.query<{ checkpoint_id: string }>({ ...sql.getHead, values: [cp.threadId, cp.stream] }),
  );
  const current = (head.rows[0]?.checkpoint_id ?? null) as CheckpointId | null;
  throw conflictError(cp, expectedHeadId, current);
}

function isUniqueViolation(error: unknown, constraint: string): boolean {
  if (!(error instanceof Error)) return false;
  const { code, constraint: name } = error as Error & { code?: string; constraint?: string };
  return code === "23505" && name === constraint;
}
