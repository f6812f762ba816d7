/**
 * The rows of the SQL stores' webhook tables and their decoders, shared so SQLite and Postgres
 * read them the same way.
 */
import {
  decodeWebhookList,
  encodeWebhookList,
  type ClaimedDelivery,
  type OutboxEvent,
  type StoredWebhookSubscription,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookDeliveryStatus,
  type WebhookEventType,
} from "./webhooks.ts";

/** A `webhook_subscriptions` row. */
export interface WebhookSubscriptionRow {
  id: string;
  tenant: string | null;
  url: string;
  events: string;
  graphs: string;
  secret: string;
  previous_secret: string | null;
  previous_until: string | null;
  created_at: string;
  created_by: string;
}

/** A `webhook_events` row. */
export interface WebhookEventRow {
  event_id: string;
  type: string;
  created_at: string;
  tenant: string | null;
  thread_id: string;
  run_id: string;
  interrupt_id: string | null;
  graph: string | null;
  root_graph: string | null;
  status: string;
  actor: string | null;
  answer: string | null;
  record: string;
}

/** A `webhook_deliveries` row. */
export interface WebhookDeliveryRow {
  subscription_id: string;
  event_id: string;
  type: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A `webhook_attempts` row. */
export interface WebhookAttemptRow {
  subscription_id: string;
  event_id: string;
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/** The subscription columns, in the order {@link subscriptionValues} lists their values. */
export const SUBSCRIPTION_COLUMNS = [
  "id",
  "tenant",
  "url",
  "events",
  "graphs",
  "secret",
  "previous_secret",
  "previous_until",
  "created_at",
  "created_by",
] as const;

/** A subscription's column values, in {@link SUBSCRIPTION_COLUMNS} order. */
export function subscriptionValues(s: StoredWebhookSubscription): (string | null)[] {
  return [
    s.id,
    s.tenant,
    s.url,
    encodeWebhookList(s.events),
    encodeWebhookList(s.graphs),
    s.secret,
    s.previousSecret,
    s.previousSecretUntil,
    s.createdAt,
    s.createdBy,
  ];
}

/** Decodes a subscription row. */
export function subscriptionFromRow(row: WebhookSubscriptionRow): StoredWebhookSubscription {
  return {
    id: row.id,
    tenant: row.tenant,
    url: row.url,
    events: decodeWebhookList(row.events) as WebhookEventType[],
    graphs: decodeWebhookList(row.graphs),
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretUntil: row.previous_until,
    createdAt: row.created_at,
    createdBy: row.created_by,
  };
}

/** Decodes an event row. */
export function eventFromRow(row: WebhookEventRow): OutboxEvent {
  return {
    eventId: row.event_id,
    type: row.type as WebhookEventType,
    createdAt: row.created_at,
    tenant: row.tenant,
    threadId: row.thread_id,
    runId: row.run_id,
    interruptId: row.interrupt_id,
    graph: row.graph,
    rootGraph: row.root_graph,
    status: row.status as OutboxEvent["status"],
    actor: row.actor,
    answer: row.answer,
    record: row.record,
  };
}

/** A claimed delivery from its subscription and event rows and its attempts so far. */
export function claimFromRows(
  subscription: WebhookSubscriptionRow,
  event: WebhookEventRow,
  attempts: number,
): ClaimedDelivery {
  return {
    subscription: subscriptionFromRow(subscription),
    event: eventFromRow(event),
    attempts: Number(attempts),
  };
}

/** Decodes an attempt row. */
export function attemptFromRow(row: WebhookAttemptRow): WebhookAttempt {
  return {
    attempt: Number(row.attempt),
    at: row.at,
    statusCode: row.status_code === null ? null : Number(row.status_code),
    error: row.error,
    durationMs: Number(row.duration_ms),
  };
}

/** Decodes delivery rows and their attempts (any order) into deliveries, in the rows' order. */
export function deliveriesFromRows(
  rows: readonly WebhookDeliveryRow[],
  attempts: readonly WebhookAttemptRow[],
): WebhookDelivery[] {
  const logs = new Map<string, WebhookAttempt[]>();
  for (const row of [...attempts].sort((a, b) => Number(a.attempt) - Number(b.attempt))) {
    const key = row.event_id;
    logs.set(key, [...(logs.get(key) ?? []), attemptFromRow(row)]);
  }
  return rows.map((row) => ({
    subscriptionId: row.subscription_id,
    eventId: row.event_id,
    type: row.type as WebhookEventType,
    status: row.status as WebhookDeliveryStatus,
    attempts: Number(row.attempts),
    nextAttemptAt: row.status === "pending" ? row.next_attempt_at : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    log: logs.get(row.event_id) ?? [],
  }));
}
