/**
 * The metrics Rein exports, each under one Prometheus name and one OpenTelemetry name (the same
 * words: `rein_approvals_pending` is `rein.approvals.pending`), with their labels and buckets. The
 * names are stable: dashboards and alerts select on them (see docs/metrics.md).
 */

/** One metric: its two names, help text, kind and label names. */
export interface MetricSpec {
  /** Prometheus name (`rein_*`; counters end in `_total`, durations in `_seconds`). */
  prom: string;
  /** OpenTelemetry instrument name (`rein.*`). */
  otel: string;
  help: string;
  /** OpenTelemetry unit (UCUM): `s` for durations, `{item}`-style annotations for counts. */
  unit: string;
  labels: readonly string[];
}

/** Upper bounds of the time-to-decision histogram, seconds: from a second to a week. */
export const DECISION_BUCKETS = [
  1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14_400, 28_800, 86_400, 172_800, 604_800,
];

/** Upper bounds of the request and webhook attempt histograms, seconds. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Every metric, by role. */
export const Metrics = {
  pending: {
    prom: "rein_approvals_pending",
    otel: "rein.approvals.pending",
    help: "Pending approvals (interrupts waiting for an answer), by tenant and root graph, read from the store at scrape time.",
    unit: "{interrupt}",
    labels: ["tenant", "graph"],
  },
  oldestAge: {
    prom: "rein_approvals_oldest_age_seconds",
    otel: "rein.approvals.oldest_age",
    help: "Age of the oldest pending approval, by tenant and root graph, in seconds.",
    unit: "s",
    labels: ["tenant", "graph"],
  },
  decisionTime: {
    prom: "rein_approval_decision_seconds",
    otel: "rein.approvals.decision.duration",
    help: "Time from an interrupt's creation to its answer (or timeout, or cancellation), in seconds, observed by the process that applied it.",
    unit: "s",
    labels: ["graph", "decision", "actor_type"],
  },
  answers: {
    prom: "rein_approval_answers_total",
    otel: "rein.approvals.answers",
    help: "Interrupts resolved in this process, by root graph, decision and actor type.",
    unit: "{interrupt}",
    labels: ["graph", "decision", "actor_type"],
  },
  escalations: {
    prom: "rein_approval_escalations_total",
    otel: "rein.approvals.escalations",
    help: "Escalation ladder steps taken in this process (remind, escalate), by stage and root graph.",
    unit: "{step}",
    labels: ["stage", "graph"],
  },
  webhookDeliveries: {
    prom: "rein_webhook_deliveries_total",
    otel: "rein.webhooks.deliveries",
    help: "Webhook delivery attempts by outcome: delivered (2xx), retry (failed, will retry) or dead (failed, no attempts left).",
    unit: "{attempt}",
    labels: ["outcome"],
  },
  webhookDuration: {
    prom: "rein_webhook_attempt_duration_seconds",
    otel: "rein.webhooks.attempt.duration",
    help: "Duration of a webhook delivery attempt (until the receiver answered, failed or timed out), in seconds.",
    unit: "s",
    labels: ["outcome"],
  },
  runsStarted: {
    prom: "rein_runs_started_total",
    otel: "rein.runs.started",
    help: "Runs this process started executing, by kind: run (new input), resume (an answer) or continue.",
    unit: "{run}",
    labels: ["kind"],
  },
  runsFinished: {
    prom: "rein_runs_finished_total",
    otel: "rein.runs.finished",
    help: "Runs this process finished executing, by kind and status: done, interrupted, error, cancelled, handed_over (shutdown handed it to another process), or failed (the call threw).",
    unit: "{run}",
    labels: ["kind", "status"],
  },
  httpRequests: {
    prom: "rein_http_requests_total",
    otel: "rein.http.requests",
    help: "HTTP requests answered, by method, route pattern and status class (2xx, 4xx, ...).",
    unit: "{request}",
    labels: ["method", "route", "status_class"],
  },
  httpDuration: {
    prom: "rein_http_request_duration_seconds",
    otel: "rein.http.request.duration",
    help: "Time to answer an HTTP request (until the response was sent; an SSE stream counts until it closed), by method, route pattern and status class, in seconds.",
    unit: "s",
    labels: ["method", "route", "status_class"],
  },
} as const satisfies Record<string, MetricSpec>;

/** What a recorded answer is labelled with. */
export type Decision = "approve" | "reject" | "edit" | "respond" | "value" | "timeout" | "cancel";

/** Who resolved an interrupt: a person, the deadline timer, or another part of the system. */
export type ActorType = "human" | "timer" | "system";

/** A step of the escalation ladder. */
export type EscalationStage = "remind" | "escalate";
