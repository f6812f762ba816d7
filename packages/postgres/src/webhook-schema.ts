/**
 * Migration 9 of the Postgres store: the webhook outbox. Triggers on `interrupts` and `runs`
 * write an event, and one delivery per matching subscription, in the transaction of the change
 * they report, so no code path (nor server-side function) that changes those rows can forget to
 * (see docs/webhooks.md).
 */

const KEY = 'text COLLATE "C"';

/** Now, as an ISO text like `Date#toISOString` writes it (the stores compare times as text). */
const NOW = `to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Which subscriptions (`sub`) an event of the emit function's arguments goes to. */
const MATCHES = `(sub.tenant IS NULL OR sub.tenant = p_tenant)
      AND position(',' || p_type || ',' IN sub.events) > 0
      AND (sub.graphs = '' OR position(',' || p_root || ',' IN sub.graphs) > 0)`;

const TABLES = (s: string): string => `
  CREATE TABLE ${s}.webhook_subscriptions (
    id              ${KEY} PRIMARY KEY,
    tenant          ${KEY},
    url             text NOT NULL,
    events          text NOT NULL, -- ',type,type,'
    graphs          text NOT NULL, -- ',graph,graph,' or '' for every graph
    secret          text NOT NULL,
    previous_secret text,
    previous_until  text,
    created_at      ${KEY} NOT NULL,
    created_by      text NOT NULL
  );
  CREATE INDEX webhook_subscriptions_by_tenant ON ${s}.webhook_subscriptions (tenant, created_at);

  CREATE TABLE ${s}.webhook_events (
    event_id     ${KEY} PRIMARY KEY,
    type         text NOT NULL,
    created_at   ${KEY} NOT NULL,
    tenant       ${KEY},
    thread_id    ${KEY} NOT NULL,
    run_id       ${KEY} NOT NULL,
    interrupt_id ${KEY},
    graph        text,
    root_graph   text,
    status       text NOT NULL,
    actor        text,
    answer       text,
    record       text NOT NULL
  );

  CREATE TABLE ${s}.webhook_deliveries (
    subscription_id ${KEY} NOT NULL,
    event_id        ${KEY} NOT NULL,
    type            text NOT NULL,
    status          text NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at ${KEY},
    lease_until     ${KEY} NOT NULL DEFAULT '',
    created_at      ${KEY} NOT NULL,
    updated_at      ${KEY} NOT NULL,
    PRIMARY KEY (subscription_id, event_id)
  );
  CREATE INDEX webhook_deliveries_due ON ${s}.webhook_deliveries (next_attempt_at)
    WHERE status = 'pending';
  CREATE INDEX webhook_deliveries_by_subscription
    ON ${s}.webhook_deliveries (subscription_id, created_at DESC, event_id DESC);

  CREATE TABLE ${s}.webhook_attempts (
    seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    subscription_id ${KEY} NOT NULL,
    event_id        ${KEY} NOT NULL,
    attempt         integer NOT NULL,
    at              text NOT NULL,
    status_code     integer,
    error           text,
    duration_ms     integer NOT NULL
  );
  CREATE INDEX webhook_attempts_by_delivery
    ON ${s}.webhook_attempts (subscription_id, event_id, seq);
`;

/** `webhook_emit`: records an event and its deliveries, when a subscription matches it. */
const EMIT = (s: string): string => `
  CREATE FUNCTION ${s}.webhook_emit(p_type text, p_tenant text, p_thread text, p_run text,
    p_interrupt text, p_graph text, p_root text, p_status text, p_actor text, p_answer text,
    p_record text) RETURNS void LANGUAGE plpgsql AS $fn$
  DECLARE eid text; at text;
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM ${s}.webhook_subscriptions sub WHERE ${MATCHES}) THEN
      RETURN;
    END IF;
    eid := 'msg_' || replace(gen_random_uuid()::text, '-', '');
    at := ${NOW};
    INSERT INTO ${s}.webhook_events (event_id, type, created_at, tenant, thread_id, run_id,
      interrupt_id, graph, root_graph, status, actor, answer, record)
    VALUES (eid, p_type, at, p_tenant, p_thread, p_run, p_interrupt, p_graph, p_root, p_status,
      p_actor, p_answer, p_record);
    INSERT INTO ${s}.webhook_deliveries (subscription_id, event_id, type, status,
      next_attempt_at, created_at, updated_at)
    SELECT sub.id, eid, p_type, 'pending', at, at, at FROM ${s}.webhook_subscriptions sub
    WHERE ${MATCHES};
  END $fn$;
`;

/** The interrupt triggers: asked (`pending`), and leaving `pending`. */
const INTERRUPT_TRIGGERS = (s: string): string => `
  CREATE FUNCTION ${s}.webhook_interrupt() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    PERFORM ${s}.webhook_emit(CASE
        WHEN TG_OP = 'INSERT' THEN 'interrupt.pending'
        WHEN NEW.status = 'answered' AND NEW.answered_by = 'system:timer'
          THEN 'interrupt.expired'
        WHEN NEW.status = 'answered' THEN 'interrupt.answered'
        WHEN NEW.status = 'cancelled' AND NEW.deadline IS NOT NULL AND NEW.deadline <= ${NOW}
          THEN 'interrupt.expired'
        ELSE 'interrupt.cancelled' END,
      NEW.tenant, NEW.thread_id, NEW.run_id, NEW.id, NEW.graph, NEW.root_graph, NEW.status,
      CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE NEW.answered_by END,
      CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE NEW.answer END, NEW.record);
    RETURN NULL;
  END $fn$;
  CREATE TRIGGER webhook_interrupt_pending AFTER INSERT ON ${s}.interrupts
    FOR EACH ROW WHEN (NEW.status = 'pending') EXECUTE FUNCTION ${s}.webhook_interrupt();
  CREATE TRIGGER webhook_interrupt_resolved AFTER UPDATE OF status ON ${s}.interrupts
    FOR EACH ROW WHEN (OLD.status = 'pending' AND NEW.status <> 'pending')
    EXECUTE FUNCTION ${s}.webhook_interrupt();
`;

/** The run triggers: a root run reaching `done`, `error` or `cancelled`. */
const RUN_TRIGGERS = (s: string): string => `
  CREATE FUNCTION ${s}.webhook_run() RETURNS trigger LANGUAGE plpgsql AS $fn$
  DECLARE t text; g text;
  BEGIN
    SELECT tenant INTO t FROM ${s}.threads WHERE thread_id = NEW.thread_id;
    -- Parsing the record costs a subtransaction: only when someone listens.
    IF NOT EXISTS (SELECT 1 FROM ${s}.webhook_subscriptions sub
        WHERE (sub.tenant IS NULL OR sub.tenant = t)
          AND position(',run.finished,' IN sub.events) > 0) THEN
      RETURN NULL;
    END IF;
    BEGIN
      g := NEW.record::jsonb ->> 'graph';
    EXCEPTION WHEN others THEN
      g := NULL; -- a record of a serializer that does not write JSON
    END;
    PERFORM ${s}.webhook_emit('run.finished', t, NEW.thread_id, NEW.run_id, NULL, g, g,
      NEW.status, NULL, NULL, NEW.record);
    RETURN NULL;
  END $fn$;
  CREATE TRIGGER webhook_run_finished_insert AFTER INSERT ON ${s}.runs
    FOR EACH ROW WHEN (NEW.root AND NEW.status IN ('done', 'error', 'cancelled'))
    EXECUTE FUNCTION ${s}.webhook_run();
  CREATE TRIGGER webhook_run_finished_update AFTER UPDATE OF status ON ${s}.runs
    FOR EACH ROW WHEN (NEW.root AND NEW.status IN ('done', 'error', 'cancelled')
      AND OLD.status <> NEW.status)
    EXECUTE FUNCTION ${s}.webhook_run();
`;

/** The SQL of migration 9 in schema `s` (quoted). */
export const WEBHOOK_SCHEMA = (s: string): string =>
  [TABLES, EMIT, INTERRUPT_TRIGGERS, RUN_TRIGGERS].map((part) => part(s)).join("\n");
