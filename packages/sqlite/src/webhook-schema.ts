/**
 * Migration 8 of the SQLite store: the webhook outbox. Triggers on `interrupts` and `runs` write
 * an event, and one delivery per matching subscription, in the transaction of the change they
 * report, so no code path that changes those rows can forget to (see docs/webhooks.md).
 */

/** Which subscriptions an event (`NEW` of the emit view) goes to: tenant, type, root graph. */
const MATCHES = `(s.tenant IS NULL OR s.tenant = NEW.tenant)
      AND instr(s.events, ',' || NEW.type || ',') > 0
      AND (s.graphs = '' OR instr(s.graphs, ',' || NEW.root_graph || ',') > 0)`;

/** Now, as an ISO text like `Date#toISOString` writes it (the stores compare times as text). */
const NOW = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;

/** The columns a trigger hands the emit view. */
const EMIT = `INSERT INTO webhook_emit (type, tenant, thread_id, run_id, interrupt_id, graph,
    root_graph, status, actor, answer, record)`;

/** The run's graph from its record, when the record is JSON (the default serializer). */
const RUN_GRAPH = `CASE WHEN json_valid(NEW.record) THEN json_extract(NEW.record, '$.graph') END`;

/** What an interrupt leaving `pending` reports; a deadline's resolution is `interrupt.expired`. */
const RESOLVED_TYPE = `CASE
      WHEN NEW.status = 'answered' AND NEW.answered_by = 'system:timer' THEN 'interrupt.expired'
      WHEN NEW.status = 'answered' THEN 'interrupt.answered'
      WHEN NEW.status = 'cancelled' AND NEW.deadline IS NOT NULL AND NEW.deadline <= ${NOW}
        THEN 'interrupt.expired'
      ELSE 'interrupt.cancelled' END`;

/** A root run reaching a final status reports `run.finished`. */
const RUN_FINISHED = `${EMIT}
    SELECT 'run.finished', (SELECT tenant FROM threads WHERE thread_id = NEW.thread_id),
      NEW.thread_id, NEW.run_id, NULL, g, g, NEW.status, NULL, NULL, NEW.record
    FROM (SELECT ${RUN_GRAPH} AS g);`;

/** The SQL of migration 8. */
export const WEBHOOK_SCHEMA = `
  CREATE TABLE webhook_subscriptions (
    id             TEXT PRIMARY KEY,
    tenant         TEXT,
    url            TEXT NOT NULL,
    events         TEXT NOT NULL, -- ',type,type,'
    graphs         TEXT NOT NULL, -- ',graph,graph,' or '' for every graph
    secret         TEXT NOT NULL,
    previous_secret TEXT,
    previous_until TEXT,
    created_at     TEXT NOT NULL,
    created_by     TEXT NOT NULL
  );
  CREATE INDEX webhook_subscriptions_by_tenant ON webhook_subscriptions (tenant, created_at);

  CREATE TABLE webhook_events (
    seq          INTEGER PRIMARY KEY,
    event_id     TEXT NOT NULL UNIQUE,
    type         TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    tenant       TEXT,
    thread_id    TEXT NOT NULL,
    run_id       TEXT NOT NULL,
    interrupt_id TEXT,
    graph        TEXT,
    root_graph   TEXT,
    status       TEXT NOT NULL,
    actor        TEXT,
    answer       TEXT,
    record       TEXT NOT NULL
  );

  CREATE TABLE webhook_deliveries (
    subscription_id TEXT NOT NULL,
    event_id        TEXT NOT NULL,
    type            TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT,
    lease_until     TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    PRIMARY KEY (subscription_id, event_id)
  );
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE status = 'pending';
  CREATE INDEX webhook_deliveries_by_subscription
    ON webhook_deliveries (subscription_id, created_at DESC, event_id DESC);

  CREATE TABLE webhook_attempts (
    seq             INTEGER PRIMARY KEY,
    subscription_id TEXT NOT NULL,
    event_id        TEXT NOT NULL,
    attempt         INTEGER NOT NULL,
    at              TEXT NOT NULL,
    status_code     INTEGER,
    error           TEXT,
    duration_ms     INTEGER NOT NULL
  );
  CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (subscription_id, event_id, seq);

  -- Inserting into this view records an event, only when a subscription matches it.
  CREATE VIEW webhook_emit AS SELECT type, tenant, thread_id, run_id, interrupt_id, graph,
    root_graph, status, actor, answer, record FROM webhook_events;
  CREATE TRIGGER webhook_emit_insert INSTEAD OF INSERT ON webhook_emit
  WHEN EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE ${MATCHES})
  BEGIN
    INSERT INTO webhook_events (event_id, type, created_at, tenant, thread_id, run_id,
      interrupt_id, graph, root_graph, status, actor, answer, record)
    VALUES ('msg_' || lower(hex(randomblob(16))), NEW.type, ${NOW}, NEW.tenant, NEW.thread_id,
      NEW.run_id, NEW.interrupt_id, NEW.graph, NEW.root_graph, NEW.status, NEW.actor,
      NEW.answer, NEW.record);
    INSERT INTO webhook_deliveries (subscription_id, event_id, type, status, next_attempt_at,
      created_at, updated_at)
    SELECT s.id, e.event_id, e.type, 'pending', e.created_at, e.created_at, e.created_at
    FROM webhook_events e, webhook_subscriptions s
    WHERE e.seq = (SELECT max(seq) FROM webhook_events) AND ${MATCHES};
  END;

  CREATE TRIGGER webhook_interrupt_pending AFTER INSERT ON interrupts
  WHEN NEW.status = 'pending'
  BEGIN
    ${EMIT} VALUES ('interrupt.pending', NEW.tenant, NEW.thread_id, NEW.run_id, NEW.id,
      NEW.graph, NEW.root_graph, NEW.status, NULL, NULL, NEW.record);
  END;

  CREATE TRIGGER webhook_interrupt_resolved AFTER UPDATE OF status ON interrupts
  WHEN OLD.status = 'pending' AND NEW.status <> 'pending'
  BEGIN
    ${EMIT} VALUES (${RESOLVED_TYPE}, NEW.tenant, NEW.thread_id, NEW.run_id, NEW.id, NEW.graph,
      NEW.root_graph, NEW.status, NEW.answered_by, NEW.answer, NEW.record);
  END;

  CREATE TRIGGER webhook_run_finished_insert AFTER INSERT ON runs
  WHEN NEW.root AND NEW.status IN ('done', 'error', 'cancelled')
  BEGIN
    ${RUN_FINISHED}
  END;

  CREATE TRIGGER webhook_run_finished_update AFTER UPDATE OF status ON runs
  WHEN NEW.root AND NEW.status IN ('done', 'error', 'cancelled') AND OLD.status <> NEW.status
  BEGIN
    ${RUN_FINISHED}
  END;
`;
