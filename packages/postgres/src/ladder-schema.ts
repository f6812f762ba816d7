/**
 * Migration 10 of the Postgres store: the escalation ladder. The row's `deadline` already holds
 * the timer's next step (a reminder, the escalation, then the deadline; the ladder's times are in
 * the encoded record), so its partial index serves ladder steps too; `stage` records the step
 * reached, written only by the timer's conditional step (see docs/interrupts.md). A trigger
 * reports each step to the webhook outbox (migration 9) in the step's transaction; the functions
 * that read or re-raise interrupts learn the column.
 */
import { TASK_OUTCOME } from "./approval-functions.ts";

/** `interrupt_json` with the `stage` column (its INTERRUPT_COLUMNS from migration 10). */
const INTERRUPT_JSON_10 = (s: string): string => `
  CREATE OR REPLACE FUNCTION ${s}.interrupt_json(i ${s}.interrupts) RETURNS json
  LANGUAGE sql IMMUTABLE AS $fn$
    SELECT json_build_object('id', i.id, 'thread_id', i.thread_id, 'run_id', i.run_id,
      'task_id', i.task_id, 'graph', i.graph, 'tenant', i.tenant, 'status', i.status,
      'created_at', i.created_at, 'deadline', i.deadline, 'answer', i.answer,
      'answered_by', i.answered_by, 'answered_at', i.answered_at, 'record', i.record,
      'policy', i.policy, 'approvals', i.approvals, 'stage', i.stage)
  $fn$;
`;

/** The SQL of migration 10 in schema `s` (quoted). */
export const LADDER_SCHEMA = (s: string): string => `
  ALTER TABLE ${s}.interrupts ADD COLUMN stage text
    CHECK (stage IN ('reminded', 'escalated'));
  ${INTERRUPT_JSON_10(s)}
  CREATE FUNCTION ${s}.webhook_interrupt_step() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    PERFORM ${s}.webhook_emit(CASE WHEN NEW.stage = 'escalated' THEN 'interrupt.escalated'
        ELSE 'interrupt.reminded' END,
      NEW.tenant, NEW.thread_id, NEW.run_id, NEW.id, NEW.graph, NEW.root_graph, NEW.status,
      NULL, NULL, NEW.record);
    RETURN NULL;
  END $fn$;
  CREATE TRIGGER webhook_interrupt_step AFTER UPDATE OF stage ON ${s}.interrupts
    FOR EACH ROW WHEN (OLD.status = 'pending' AND NEW.status = 'pending'
      AND NEW.stage IS NOT NULL)
    EXECUTE FUNCTION ${s}.webhook_interrupt_step();
  DROP FUNCTION ${s}.task_outcome(text, text, text, text, text, text,
    text[], text[], text[], text[], text[], text[], text[], text[], text[], text[], text[],
    text[], text[], text[], bigint, text[], text[], text[], text[], text[], text[], text[],
    boolean, text[], integer, text[]);
  ${TASK_OUTCOME(s, true, true)}
`;
