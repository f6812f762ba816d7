/**
 * The webhook tables of a {@link PostgresSaver}'s schema (migration 9): subscriptions, and the
 * deliveries the outbox triggers wrote, claimed by delivery loops with `FOR UPDATE SKIP LOCKED`.
 */
import type pg from "pg";
import {
  claimFromRows,
  deliveriesFromRows,
  SUBSCRIPTION_COLUMNS,
  subscriptionFromRow,
  subscriptionValues,
  type ClaimedDelivery,
  type StoredWebhookSubscription,
  type WebhookAttemptResult,
  type WebhookAttemptRow,
  type WebhookDelivery,
  type WebhookDeliveryRow,
  type WebhookEventRow,
  type WebhookStore,
  type WebhookSubscriptionRow,
} from "@rein/core/store";
import { guarded } from "./connection.ts";
import { quoteSchema } from "./migrations.ts";

/**
 * The {@link WebhookStore} of a Postgres schema. A claim is one statement that locks due rows
 * with `SKIP LOCKED` and leases them, so loops on several workers never send one delivery at
 * once, and none waits for another's rows.
 *
 * @example
 * ```ts
 * const webhooks = new PostgresWebhooks(await PostgresSaver.connect({ connectionString }));
 * ```
 */
export class PostgresWebhooks implements WebhookStore {
  readonly #saver: { readonly pool: pg.Pool; readonly schema: string };

  /** The webhook tables of `saver`'s schema, on its pool (read at each call: it may connect later). */
  constructor(saver: { readonly pool: pg.Pool; readonly schema: string }) {
    this.#saver = saver;
  }

  get #pool(): pg.Pool {
    return this.#saver.pool;
  }

  get #s(): string {
    return quoteSchema(this.#saver.schema);
  }

  async #rows<Row extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<Row[]> {
    return guarded(async () => (await this.#pool.query<Row>(text, values)).rows);
  }

  async #count(text: string, values: unknown[]): Promise<number> {
    return guarded(async () => (await this.#pool.query(text, values)).rowCount ?? 0);
  }

  async createSubscription(subscription: StoredWebhookSubscription): Promise<void> {
    const marks = SUBSCRIPTION_COLUMNS.map((_, i) => `$${i + 1}`).join(", ");
    await this.#count(
      `INSERT INTO ${this.#s}.webhook_subscriptions (${SUBSCRIPTION_COLUMNS.join(", ")})
       VALUES (${marks})`,
      subscriptionValues(subscription),
    );
  }

  async listSubscriptions(tenant?: string | null): Promise<StoredWebhookSubscription[]> {
    const rows =
      tenant === undefined
        ? await this.#rows<WebhookSubscriptionRow>(
            `SELECT * FROM ${this.#s}.webhook_subscriptions ORDER BY created_at, id`,
            [],
          )
        : await this.#rows<WebhookSubscriptionRow>(
            `SELECT * FROM ${this.#s}.webhook_subscriptions WHERE tenant IS NOT DISTINCT FROM $1
             ORDER BY created_at, id`,
            [tenant],
          );
    return rows.map(subscriptionFromRow);
  }

  async getSubscription(id: string): Promise<StoredWebhookSubscription | undefined> {
    const [row] = await this.#rows<WebhookSubscriptionRow>(
      `SELECT * FROM ${this.#s}.webhook_subscriptions WHERE id = $1`,
      [id],
    );
    return row && subscriptionFromRow(row);
  }

  async deleteSubscription(id: string): Promise<boolean> {
    const [row] = await this.#rows<{ gone: number }>(
      `WITH gone AS (DELETE FROM ${this.#s}.webhook_subscriptions WHERE id = $1 RETURNING 1),
       deliveries AS (DELETE FROM ${this.#s}.webhook_deliveries WHERE subscription_id = $1),
       attempts AS (DELETE FROM ${this.#s}.webhook_attempts WHERE subscription_id = $1)
       SELECT count(*)::int AS gone FROM gone`,
      [id],
    );
    return (row?.gone ?? 0) > 0;
  }

  async rotateSecret(id: string, secret: string, previousUntil: string): Promise<boolean> {
    const changed = await this.#count(
      `UPDATE ${this.#s}.webhook_subscriptions
       SET previous_secret = secret, previous_until = $1, secret = $2 WHERE id = $3`,
      [previousUntil, secret, id],
    );
    return changed > 0;
  }

  async claimDeliveries(
    now: string,
    leaseUntil: string,
    limit: number,
  ): Promise<ClaimedDelivery[]> {
    const s = this.#s;
    const rows = await this.#rows<{
      attempts: number;
      sub: WebhookSubscriptionRow;
      event: WebhookEventRow;
    }>(
      `WITH due AS (
         SELECT subscription_id, event_id FROM ${s}.webhook_deliveries
         WHERE status = 'pending' AND next_attempt_at <= $1 AND lease_until <= $1
         ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED
       ), leased AS (
         UPDATE ${s}.webhook_deliveries d SET lease_until = $2 FROM due
         WHERE d.subscription_id = due.subscription_id AND d.event_id = due.event_id
         RETURNING d.subscription_id, d.event_id, d.attempts
       )
       SELECT l.attempts, row_to_json(sub) AS sub, row_to_json(e) AS event
       FROM leased l
         JOIN ${s}.webhook_events e ON e.event_id = l.event_id
         JOIN ${s}.webhook_subscriptions sub ON sub.id = l.subscription_id`,
      [now, leaseUntil, limit],
    );
    return rows.map((row) => claimFromRows(row.sub, row.event, row.attempts));
  }

  async recordAttempt(result: WebhookAttemptResult): Promise<void> {
    await this.#count(
      `WITH attempt AS (
         INSERT INTO ${this.#s}.webhook_attempts (subscription_id, event_id, attempt, at,
           status_code, error, duration_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)
       )
       UPDATE ${this.#s}.webhook_deliveries SET status = $8, attempts = $3,
         next_attempt_at = $9, lease_until = '', updated_at = $4
       WHERE subscription_id = $1 AND event_id = $2 AND status = 'pending'`,
      [
        result.subscriptionId,
        result.eventId,
        result.attempt,
        result.at,
        result.statusCode,
        result.error,
        Math.round(result.durationMs),
        result.outcome === "retry" ? "pending" : result.outcome,
        result.nextAttemptAt,
      ],
    );
  }

  async pruneDeliveries(before: string, limit: number): Promise<number> {
    const s = this.#s;
    const [row] = await this.#rows<{ pruned: number }>(
      `WITH finished AS (
         DELETE FROM ${s}.webhook_deliveries d USING (
           SELECT subscription_id, event_id FROM ${s}.webhook_deliveries
           WHERE status IN ('delivered', 'dead') AND updated_at < $1 LIMIT $2
           FOR UPDATE SKIP LOCKED
         ) f
         WHERE d.subscription_id = f.subscription_id AND d.event_id = f.event_id
         RETURNING d.subscription_id, d.event_id
       ), attempts AS (
         DELETE FROM ${s}.webhook_attempts a USING finished f
         WHERE a.subscription_id = f.subscription_id AND a.event_id = f.event_id
       ), events AS (
         -- Deliveries deleted above are still visible to this statement's snapshot: an event
         -- they alone referred to goes on the next round.
         DELETE FROM ${s}.webhook_events WHERE event_id IN (
           SELECT e.event_id FROM ${s}.webhook_events e WHERE e.created_at < $1 AND NOT EXISTS (
             SELECT 1 FROM ${s}.webhook_subscriptions sub JOIN ${s}.webhook_deliveries d
               ON d.subscription_id = sub.id AND d.event_id = e.event_id)
           LIMIT $2)
       )
       SELECT count(*)::int AS pruned FROM finished`,
      [before, limit],
    );
    return row?.pruned ?? 0;
  }

  async listDeliveries(subscriptionId: string, limit: number): Promise<WebhookDelivery[]> {
    const rows = await this.#rows<WebhookDeliveryRow>(
      `SELECT subscription_id, event_id, type, status, attempts, next_attempt_at, created_at,
         updated_at
       FROM ${this.#s}.webhook_deliveries WHERE subscription_id = $1
       ORDER BY created_at DESC, event_id DESC LIMIT $2`,
      [subscriptionId, limit],
    );
    const attempts = await this.#rows<WebhookAttemptRow>(
      `SELECT * FROM ${this.#s}.webhook_attempts
       WHERE subscription_id = $1 AND event_id = ANY ($2)`,
      [subscriptionId, rows.map((row) => row.event_id)],
    );
    return deliveriesFromRows(rows, attempts);
  }
}
