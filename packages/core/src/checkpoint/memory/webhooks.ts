/**
 * The webhook outbox of {@link MemorySaver}: the tables' writes call {@link MemoryWebhooks.emit}
 * in the operation that changes the row (what the SQL stores' triggers do in the transaction).
 */
import { randomUUID } from "node:crypto";
import type { RunRecord, StoredInterrupt } from "../types.ts";
import { TIMER_ACTOR, type WebhookEventType } from "../webhooks.ts";
import type { InterruptRow } from "./interrupts.ts";
import type {
  ClaimedDelivery,
  OutboxEvent,
  StoredWebhookSubscription,
  WebhookAttempt,
  WebhookAttemptResult,
  WebhookDelivery,
  WebhookStore,
} from "../webhooks.ts";

/** An event as a write reports it, before it gets an id and a time. */
export type EmittedEvent = Omit<OutboxEvent, "eventId" | "createdAt">;

interface DeliveryRow extends Omit<WebhookDelivery, "log"> {
  leaseUntil: string;
  log: WebhookAttempt[];
}

/** Whether `subscription` receives `event` (tenant, type, root graph). */
function matches(subscription: StoredWebhookSubscription, event: EmittedEvent): boolean {
  return (
    (subscription.tenant === null || subscription.tenant === event.tenant) &&
    subscription.events.includes(event.type) &&
    (subscription.graphs.length === 0 ||
      (event.rootGraph !== null && subscription.graphs.includes(event.rootGraph)))
  );
}

const copy = <T>(value: T): T => structuredClone(value);

/** What every event of an interrupt row reports of the row as it is after the change. */
function interruptFacts(row: InterruptRow) {
  return {
    tenant: row.tenant,
    threadId: row.threadId,
    runId: row.runId,
    interruptId: row.id,
    graph: row.graph,
    rootGraph: row.rootGraph,
    status: row.status,
    record: row.data,
  };
}

/** The in-memory {@link WebhookStore}. Methods are synchronous underneath, so atomic. */
export class MemoryWebhooks implements WebhookStore {
  readonly #subscriptions = new Map<string, StoredWebhookSubscription>();
  readonly #events = new Map<string, OutboxEvent>();
  /** `subscription \0 event` → delivery, in insertion order. */
  readonly #deliveries = new Map<string, DeliveryRow>();

  /** Whether any subscription exists (so a write can skip building events nobody receives). */
  get listening(): boolean {
    return this.#subscriptions.size > 0;
  }

  /**
   * Reports an interrupt row that entered or left `pending` (see the SQL triggers): a deadline's
   * resolution (the timer's answer, or a cancel past the deadline) is `interrupt.expired`.
   */
  emitInterrupt(row: InterruptRow, record: StoredInterrupt, encode: (v: unknown) => string): void {
    const answered = row.status === "answered";
    const type: WebhookEventType =
      row.status === "pending"
        ? "interrupt.pending"
        : answered
          ? record.answeredBy === TIMER_ACTOR
            ? "interrupt.expired"
            : "interrupt.answered"
          : row.status === "cancelled" &&
              row.deadline !== null &&
              row.deadline <= new Date().toISOString()
            ? "interrupt.expired"
            : "interrupt.cancelled";
    this.emit({
      ...interruptFacts(row),
      type,
      actor: answered ? (record.answeredBy ?? null) : null,
      answer: answered ? encode(record.answer ?? null) : null,
    });
  }

  /** Reports a ladder step of a pending interrupt (`interrupt.reminded`, `interrupt.escalated`). */
  emitStep(row: InterruptRow, type: "interrupt.reminded" | "interrupt.escalated"): void {
    this.emit({ ...interruptFacts(row), type, actor: null, answer: null });
  }

  /** Reports a root run that reached a final status. */
  emitRunFinished(run: RunRecord, tenant: string | null, data: string): void {
    this.emit({
      type: "run.finished",
      tenant,
      threadId: run.threadId,
      runId: run.runId,
      interruptId: null,
      graph: run.graph,
      rootGraph: run.graph,
      status: run.status,
      actor: null,
      answer: null,
      record: data,
    });
  }

  /** Records `event` and its deliveries when a subscription matches it (called by writes). */
  emit(event: EmittedEvent): void {
    const targets = [...this.#subscriptions.values()].filter((s) => matches(s, event));
    if (targets.length === 0) return;
    const createdAt = new Date().toISOString();
    const eventId = `msg_${randomUUID().replaceAll("-", "")}`;
    this.#events.set(eventId, { ...event, eventId, createdAt });
    for (const subscription of targets)
      this.#deliveries.set(`${subscription.id}\u0000${eventId}`, {
        subscriptionId: subscription.id,
        eventId,
        type: event.type,
        status: "pending",
        attempts: 0,
        nextAttemptAt: createdAt,
        createdAt,
        updatedAt: createdAt,
        leaseUntil: "",
        log: [],
      });
  }

  createSubscription(subscription: StoredWebhookSubscription): Promise<void> {
    this.#subscriptions.set(subscription.id, copy(subscription));
    return Promise.resolve();
  }

  listSubscriptions(tenant?: string | null): Promise<StoredWebhookSubscription[]> {
    const all = [...this.#subscriptions.values()];
    return Promise.resolve(
      copy(tenant === undefined ? all : all.filter((s) => s.tenant === tenant)),
    );
  }

  getSubscription(id: string): Promise<StoredWebhookSubscription | undefined> {
    return Promise.resolve(copy(this.#subscriptions.get(id)));
  }

  deleteSubscription(id: string): Promise<boolean> {
    for (const [key, row] of this.#deliveries)
      if (row.subscriptionId === id) this.#deliveries.delete(key);
    return Promise.resolve(this.#subscriptions.delete(id));
  }

  rotateSecret(id: string, secret: string, previousUntil: string): Promise<boolean> {
    const subscription = this.#subscriptions.get(id);
    if (!subscription) return Promise.resolve(false);
    subscription.previousSecret = subscription.secret;
    subscription.previousSecretUntil = previousUntil;
    subscription.secret = secret;
    return Promise.resolve(true);
  }

  claimDeliveries(now: string, leaseUntil: string, limit: number): Promise<ClaimedDelivery[]> {
    const due = [...this.#deliveries.values()]
      .filter(
        (row) =>
          row.status === "pending" &&
          row.nextAttemptAt !== null &&
          row.nextAttemptAt <= now &&
          row.leaseUntil <= now,
      )
      .sort((a, b) => ((a.nextAttemptAt ?? "") < (b.nextAttemptAt ?? "") ? -1 : 1))
      .slice(0, limit);
    const claimed: ClaimedDelivery[] = [];
    for (const row of due) {
      const subscription = this.#subscriptions.get(row.subscriptionId);
      const event = this.#events.get(row.eventId);
      if (!subscription || !event) continue;
      row.leaseUntil = leaseUntil;
      claimed.push(copy({ subscription, event, attempts: row.attempts }));
    }
    return Promise.resolve(claimed);
  }

  recordAttempt(result: WebhookAttemptResult): Promise<void> {
    const row = this.#deliveries.get(`${result.subscriptionId}\u0000${result.eventId}`);
    if (row?.status === "pending") {
      const { attempt, at, statusCode, error, durationMs } = result;
      row.log.push({ attempt, at, statusCode, error, durationMs: Math.round(durationMs) });
      row.status = result.outcome === "retry" ? "pending" : result.outcome;
      row.attempts = attempt;
      row.nextAttemptAt = result.nextAttemptAt;
      row.leaseUntil = "";
      row.updatedAt = at;
    }
    return Promise.resolve();
  }

  pruneDeliveries(before: string, limit: number): Promise<number> {
    let pruned = 0;
    for (const [key, row] of this.#deliveries) {
      if (pruned >= limit) break;
      if (row.status === "pending" || row.updatedAt >= before) continue;
      this.#deliveries.delete(key);
      pruned += 1;
    }
    const referred = new Set([...this.#deliveries.values()].map((row) => row.eventId));
    for (const [eventId, event] of this.#events)
      if (event.createdAt < before && !referred.has(eventId)) this.#events.delete(eventId);
    return Promise.resolve(pruned);
  }

  listDeliveries(subscriptionId: string, limit: number): Promise<WebhookDelivery[]> {
    const rows = [...this.#deliveries.values()]
      .filter((row) => row.subscriptionId === subscriptionId)
      .reverse()
      .slice(0, limit)
      .map(({ leaseUntil: _lease, ...row }) => ({
        ...row,
        nextAttemptAt: row.status === "pending" ? row.nextAttemptAt : null,
      }));
    return Promise.resolve(copy(rows));
  }
}
