/**
 * The webhook outbox a store keeps: subscriptions, the events its writes report (written in the
 * same transaction as the change, by triggers in the SQL stores) and one delivery per event and
 * matching subscription, claimed by any process's delivery loop under a lease.
 *
 * An event is stored only when a subscription matches it at commit time (tenant, type and root
 * graph): a store with no subscriptions writes nothing more than before.
 */
import type { InterruptStatus, RunStatus } from "../types.ts";

/** Every event type, in the order the docs list them. */
export const WEBHOOK_EVENT_TYPES = [
  "interrupt.pending",
  "interrupt.reminded",
  "interrupt.answered",
  "interrupt.expired",
  "interrupt.escalated",
  "interrupt.cancelled",
  "run.finished",
] as const;

/**
 * One event type. `interrupt.reminded` and `interrupt.escalated` are the steps of an interrupt's
 * escalation ladder, written by the deadline timer's step.
 */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The actor a deadline's resolution is recorded under: its answer is `interrupt.expired`. */
export const TIMER_ACTOR = "system:timer";

/** A subscription as the API shows it (never its secrets). */
export interface WebhookSubscription {
  /** `wh_…`. */
  id: string;
  /** The tenant whose events it receives; `null` (made in open mode) receives every tenant's. */
  tenant: string | null;
  url: string;
  events: WebhookEventType[];
  /** Root graphs (apps) whose events it receives; empty for all. */
  graphs: string[];
  createdAt: string;
  createdBy: string;
  /** Until when the secret before the last rotation still signs (both signatures are sent). */
  previousSecretUntil: string | null;
}

/** A subscription with its signing secrets, as the store keeps it. */
export interface StoredWebhookSubscription extends WebhookSubscription {
  /** `whsec_…` (Standard Webhooks). */
  secret: string;
  /** The secret before the last rotation, while `previousSecretUntil` has not passed. */
  previousSecret: string | null;
}

/**
 * An outbox event as the store wrote it: the changed row's fields, its record and answer still
 * encoded by the store's serializer (the delivery loop decodes them into the payload, the same
 * bytes on every attempt).
 */
export interface OutboxEvent {
  /** `msg_…`: the `webhook-id` of every attempt of every delivery of this event. */
  eventId: string;
  type: WebhookEventType;
  createdAt: string;
  tenant: string | null;
  threadId: string;
  runId: string;
  interruptId: string | null;
  /** The asking run's graph (interrupts) or the run's graph. */
  graph: string | null;
  /** The root graph of the run tree (the app). */
  rootGraph: string | null;
  /** The interrupt's or run's status after the change. */
  status: InterruptStatus | RunStatus;
  /** Who answered (`answered_by`), when the interrupt was answered. */
  actor: string | null;
  /** The encoded answer, when answered. */
  answer: string | null;
  /** The encoded interrupt or run record. */
  record: string;
}

/** Where a delivery stands. */
export type WebhookDeliveryStatus = "pending" | "delivered" | "dead";

/** One attempt to deliver. */
export interface WebhookAttempt {
  attempt: number;
  at: string;
  /** The receiver's HTTP status, or `null` when none came (refused, timed out). */
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** One event for one subscription, with its attempts. */
export interface WebhookDelivery {
  subscriptionId: string;
  eventId: string;
  type: WebhookEventType;
  status: WebhookDeliveryStatus;
  attempts: number;
  /** When the next attempt is due (`null` once delivered or dead). */
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
  log: WebhookAttempt[];
}

/** A delivery a loop claimed: the event and the subscription to send it to. */
export interface ClaimedDelivery {
  subscription: StoredWebhookSubscription;
  event: OutboxEvent;
  /** Attempts made before this one. */
  attempts: number;
}

/** What one attempt came to, recorded with the attempt. */
export interface WebhookAttemptResult extends WebhookAttempt {
  subscriptionId: string;
  eventId: string;
  /** `retry` schedules the next attempt at `nextAttemptAt`. */
  outcome: "delivered" | "retry" | "dead";
  nextAttemptAt: string | null;
}

/** The webhook tables of a store. Every method is one transaction. */
export interface WebhookStore {
  /** Stores a new subscription. */
  createSubscription(subscription: StoredWebhookSubscription): Promise<void>;
  /** Subscriptions of `tenant` (`undefined`: every tenant's), oldest first. */
  listSubscriptions(tenant?: string | null): Promise<StoredWebhookSubscription[]>;
  getSubscription(id: string): Promise<StoredWebhookSubscription | undefined>;
  /** Deletes a subscription and its deliveries; `false` when it did not exist. */
  deleteSubscription(id: string): Promise<boolean>;
  /** Replaces the secret; the old one signs too until `previousUntil`. */
  rotateSecret(id: string, secret: string, previousUntil: string): Promise<boolean>;
  /**
   * Claims up to `limit` pending deliveries due at `now` whose lease has lapsed, leasing them
   * until `leaseUntil` so no other loop sends them meanwhile (a loop that dies loses its lease).
   */
  claimDeliveries(now: string, leaseUntil: string, limit: number): Promise<ClaimedDelivery[]>;
  /** Records an attempt and its outcome, releasing the lease. */
  recordAttempt(result: WebhookAttemptResult): Promise<void>;
  /** A subscription's deliveries, newest first, with their attempts. */
  listDeliveries(subscriptionId: string, limit: number): Promise<WebhookDelivery[]>;
  /**
   * Deletes up to `limit` finished deliveries (delivered or dead) last changed before `before`,
   * with their attempts, and the events older than `before` that no delivery refers to any more.
   * Pending deliveries and their events are never deleted.
   *
   * @returns how many deliveries it deleted (fewer than `limit`: nothing more is due).
   */
  pruneDeliveries(before: string, limit: number): Promise<number>;
}

/** The encoded list of event types or graphs a subscription row keeps: `,a,b,` (empty: none). */
export function encodeWebhookList(items: readonly string[]): string {
  return items.length === 0 ? "" : `,${items.join(",")},`;
}

/** Decodes {@link encodeWebhookList}. */
export function decodeWebhookList(text: string): string[] {
  return text.split(",").filter((item) => item !== "");
}
