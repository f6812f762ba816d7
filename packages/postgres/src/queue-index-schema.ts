/**
 * Migration 15 of the Postgres store: the interrupt queue's indexes of pending rows.
 */

/**
 * Migration 15: the queue's filtered indexes hold the pending rows only, so an answer (or a
 * supersession) writes 4 index entries instead of 9. The `status` column left them: an
 * answered row's update changed it, so it could never be HOT and wrote a new entry into each of
 * these indexes, which the queue never reads for answered rows. The queue names `status =
 * 'pending'` as a literal (queries.ts), which lets the planner prove each predicate; other
 * statuses read `interrupts_by_created` or a thread's or run's index. `interrupts_by_thread`
 * goes: its readers are served by `interrupts_by_task` (whose first column is the thread) and
 * `interrupts_pending_by_thread`, so every interrupt written paid an entry nobody read in order.
 */
export const PENDING_QUEUE_INDEXES = (s: string): string => `
  DROP INDEX ${s}.interrupts_by_thread;
  DROP INDEX ${s}.interrupts_queue;
  DROP INDEX ${s}.interrupts_by_tenant;
  DROP INDEX ${s}.interrupts_by_graph;
  DROP INDEX ${s}.interrupts_by_root_graph;
  CREATE INDEX interrupts_queue ON ${s}.interrupts (created_at DESC, id DESC)
    WHERE status = 'pending';
  CREATE INDEX interrupts_by_tenant ON ${s}.interrupts (tenant, created_at DESC, id DESC)
    WHERE status = 'pending';
  CREATE INDEX interrupts_by_graph ON ${s}.interrupts (graph, created_at DESC, id DESC)
    WHERE status = 'pending';
  CREATE INDEX interrupts_by_root_graph ON ${s}.interrupts (root_graph, created_at DESC, id DESC)
    WHERE status = 'pending';
`;
