/**
 * Migration 9 of the SQLite store: the escalation ladder. The row's `deadline` already holds the
 * timer's next step (a reminder, the escalation, then the deadline; the ladder's times are in the
 * encoded record), so its partial index serves ladder steps too; `stage` records the step reached,
 * written only by the timer's conditional step (see docs/interrupts.md). A trigger reports each
 * step to the webhook outbox in the step's transaction, as migration 8's triggers do.
 */

/** The columns a trigger hands the emit view (migration 8). */
const EMIT = `INSERT INTO webhook_emit (type, tenant, thread_id, run_id, interrupt_id, graph,
    root_graph, status, actor, answer, record)`;

/** The SQL of migration 9. */
export const LADDER_SCHEMA = `
  ALTER TABLE interrupts ADD COLUMN stage TEXT CHECK (stage IN ('reminded', 'escalated'));

  CREATE TRIGGER webhook_interrupt_step AFTER UPDATE OF stage ON interrupts
  WHEN OLD.status = 'pending' AND NEW.status = 'pending' AND NEW.stage IS NOT NULL
  BEGIN
    ${EMIT} VALUES (CASE WHEN NEW.stage = 'escalated' THEN 'interrupt.escalated'
        ELSE 'interrupt.reminded' END,
      NEW.tenant, NEW.thread_id, NEW.run_id, NEW.id, NEW.graph, NEW.root_graph, NEW.status,
      NULL, NULL, NEW.record);
  END;
`;
