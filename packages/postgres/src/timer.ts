/**
 * What the deadline timer reads and writes in the Postgres store: the interrupts whose next step
 * (a ladder step or the deadline) is due, and the escalation-ladder step — one statement (one
 * round trip, one commit) that moves the row on only while the step is still due and appends the
 * audit line (migration 10's trigger writes the webhook event in the same transaction).
 */
import type pg from "pg";
import type { LadderStepWrite, StoredInterrupt } from "@rein/core/store";
import type { InterruptRow, RowCodec } from "./codec.ts";
import { checked, guarded } from "./connection.ts";
import type { Statements } from "./statements.ts";

/** Pending interrupts whose deadline is at or before `now`, oldest first (the partial index). */
export async function expiredInterrupts(
  pool: pg.Pool,
  sql: Statements,
  codec: RowCodec,
  now: string,
  limit: number,
): Promise<StoredInterrupt[]> {
  const result = await guarded(() =>
    pool.query<InterruptRow>(checked(sql.expiredInterrupts, [now, limit])),
  );
  return result.rows.map((row) => codec.interrupt(row));
}

/** Takes `step` (see `EscalationLadderStore.takeLadderStep`); `false` when it was no longer due. */
export async function takeLadderStep(
  pool: pg.Pool,
  sql: Statements,
  codec: RowCodec,
  step: LadderStepWrite,
): Promise<boolean> {
  const values = [
    step.id,
    step.at,
    step.next,
    step.stage,
    step.policy !== undefined,
    step.policy ? codec.encode(step.policy) : null,
    codec.encode(step.audit),
  ];
  const result = await guarded(() =>
    pool.query<{ taken: number }>(checked(sql.takeLadderStep, values)),
  );
  return result.rows[0]?.taken === 1;
}
