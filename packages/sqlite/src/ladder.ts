/**
 * A step of an escalation ladder on a SQLite file: the row's conditional update (pending, and
 * still due at this step) and the step's audit line, in the caller's write transaction.
 */
import type { LadderStepWrite } from "@rein/core/store";
import { appendAuditLine } from "./audit.ts";
import type { RowCodec } from "./codec.ts";
import type { Statements } from "./statements.ts";

/** A step's values the serializer encoded before the transaction began. */
export interface EncodedLadderStep {
  audit: string;
  /** The widened policy (`null`: none); only written when the step carries one. */
  policy: string | null;
}

/** Encodes `step`'s values before its transaction: a value the serializer refuses writes nothing. */
export function encodeLadderStep(codec: RowCodec, step: LadderStepWrite): EncodedLadderStep {
  return {
    audit: codec.encode(step.audit),
    policy: step.policy ? codec.encode(step.policy) : null,
  };
}

/**
 * Takes `step` if the row is still pending and due at it; returns whether it did. Another
 * process's timer that took it first leaves the row's `deadline` moved on, so this one matches
 * nothing and writes nothing.
 */
export function writeLadderStep(
  sql: Statements,
  step: LadderStepWrite,
  encoded: EncodedLadderStep,
): boolean {
  const changed = sql.takeLadderStep.run(
    step.next,
    step.stage,
    step.policy === undefined ? 0 : 1,
    encoded.policy,
    step.id,
    step.at,
  );
  if (Number(changed.changes) !== 1) return false;
  appendAuditLine(sql, step.threadId, encoded.audit);
  return true;
}
