/**
 * The webhook tables of a {@link SqliteSaver}'s file (migration 8): subscriptions, and the
 * deliveries the outbox triggers wrote, claimed by delivery loops in write transactions.
 */
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
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
import { transactions, type Transactions } from "./driver.ts";
import { settle } from "./errors.ts";

const EVENT_COLUMNS = `e.event_id, e.type, e.created_at, e.tenant, e.thread_id, e.run_id,
  e.interrupt_id, e.graph, e.root_graph, e.status, e.actor, e.answer, e.record`;

/**
 * The {@link WebhookStore} of a SQLite file. Claims run in `BEGIN IMMEDIATE`, so two processes
 * on one file never lease the same delivery.
 *
 * @example
 * ```ts
 * const webhooks = new SqliteWebhooks(SqliteSaver.open("rein.db"));
 * ```
 */
export class SqliteWebhooks implements WebhookStore {
  readonly #db: DatabaseSync;
  readonly #tx: Transactions;

  /** The webhook tables of `saver`'s file (its connection). */
  constructor(saver: { readonly db: DatabaseSync }) {
    this.#db = saver.db;
    this.#tx = transactions(saver.db);
  }

  #all<T>(sql: string, ...values: SQLInputValue[]): T[] {
    return this.#db.prepare(sql).all(...values) as T[];
  }

  createSubscription(subscription: StoredWebhookSubscription): Promise<void> {
    return settle(() => {
      const marks = SUBSCRIPTION_COLUMNS.map(() => "?").join(", ");
      this.#db
        .prepare(
          `INSERT INTO webhook_subscriptions (${SUBSCRIPTION_COLUMNS.join(", ")})
          VALUES (${marks})`,
        )
        .run(...subscriptionValues(subscription));
    });
  }

  listSubscriptions(tenant?: string | null): Promise<StoredWebhookSubscription[]> {
    return settle(() => {
      const rows =
        tenant === undefined
          ? this.#all<WebhookSubscriptionRow>(
              "SELECT * FROM webhook_subscriptions ORDER BY created_at, id",
            )
          : this.#all<WebhookSubscriptionRow>(
              `SELECT * FROM webhook_subscriptions WHERE tenant IS ? ORDER BY created_at, id`,
              tenant,
            );
      return rows.map(subscriptionFromRow);
    });
  }

  getSubscription(id: string): Promise<StoredWebhookSubscription | undefined> {
    return settle(() => {
      const [row] = this.#all<WebhookSubscriptionRow>(
        "SELECT * FROM webhook_subscriptions WHERE id = ?",
        id,
      );
      return row && subscriptionFromRow(row);
    });
  }

  deleteSubscription(id: string): Promise<boolean> {
    return settle(() =>
      this.#tx.immediate(() => {
        const gone = this.#db.prepare("DELETE FROM webhook_subscriptions WHERE id = ?").run(id);
        this.#db.prepare("DELETE FROM webhook_deliveries WHERE subscription_id = ?").run(id);
        this.#db.prepare("DELETE FROM webhook_attempts WHERE subscription_id = ?").run(id);
        return Number(gone.changes) > 0;
      }),
    );
  }

  rotateSecret(id: string, secret: string, previousUntil: string): Promise<boolean> {
    return settle(() => {
      const changed = this.#db
        .prepare(
          `UPDATE webhook_subscriptions
           SET previous_secret = secret, previous_until = ?, secret = ? WHERE id = ?`,
        )
        .run(previousUntil, secret, id);
      return Number(changed.changes) > 0;
    });
  }

  claimDeliveries(now: string, leaseUntil: string, limit: number): Promise<ClaimedDelivery[]> {
    return settle(() =>
      this.#tx.immediate(() => {
        const rows = this.#all<
          WebhookEventRow & { attempts: number; subscription_id: string; sub: string }
        >(
          `SELECT d.subscription_id, d.attempts, ${EVENT_COLUMNS}
           FROM webhook_deliveries d JOIN webhook_events e ON e.event_id = d.event_id
           WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND d.lease_until <= ?
           ORDER BY d.next_attempt_at LIMIT ?`,
          now,
          now,
          limit,
        );
        if (rows.length === 0) return [];
        const lease = this.#db.prepare(
          `UPDATE webhook_deliveries SET lease_until = ?
           WHERE subscription_id = ? AND event_id = ?`,
        );
        const subscriptions = new Map<string, WebhookSubscriptionRow | undefined>();
        const claimed: ClaimedDelivery[] = [];
        for (const row of rows) {
          lease.run(leaseUntil, row.subscription_id, row.event_id);
          if (!subscriptions.has(row.subscription_id))
            subscriptions.set(
              row.subscription_id,
              this.#all<WebhookSubscriptionRow>(
                "SELECT * FROM webhook_subscriptions WHERE id = ?",
                row.subscription_id,
              )[0],
            );
          const subscription = subscriptions.get(row.subscription_id);
          if (subscription) claimed.push(claimFromRows(subscription, row, row.attempts));
        }
        return claimed;
      }),
    );
  }

  recordAttempt(result: WebhookAttemptResult): Promise<void> {
    return settle(() =>
      this.#tx.immediate(() => {
        this.#db
          .prepare(
            `INSERT INTO webhook_attempts (subscription_id, event_id, attempt, at, status_code,
               error, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            result.subscriptionId,
            result.eventId,
            result.attempt,
            result.at,
            result.statusCode,
            result.error,
            Math.round(result.durationMs),
          );
        this.#db
          .prepare(
            `UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?,
               lease_until = '', updated_at = ?
             WHERE subscription_id = ? AND event_id = ? AND status = 'pending'`,
          )
          .run(
            result.outcome === "retry" ? "pending" : result.outcome,
            result.attempt,
            result.nextAttemptAt,
            result.at,
            result.subscriptionId,
            result.eventId,
          );
      }),
    );
  }

  pruneDeliveries(before: string, limit: number): Promise<number> {
    return settle(() =>
      this.#tx.immediate(() => {
        const finished = this.#all<{ subscription_id: string; event_id: string }>(
          `SELECT subscription_id, event_id FROM webhook_deliveries
          WHERE status IN ('delivered', 'dead') AND updated_at < ? LIMIT ?`,
          before,
          limit,
        );
        const deleteDelivery = this.#db.prepare(
          "DELETE FROM webhook_deliveries WHERE subscription_id = ? AND event_id = ?",
        );
        const deleteAttempts = this.#db.prepare(
          "DELETE FROM webhook_attempts WHERE subscription_id = ? AND event_id = ?",
        );
        for (const row of finished) {
          deleteDelivery.run(row.subscription_id, row.event_id);
          deleteAttempts.run(row.subscription_id, row.event_id);
        }
        // An event no delivery refers to: found through the subscriptions, so each probe is a
        // primary-key lookup (deliveries have no index by event alone).
        this.#db
          .prepare(
            `DELETE FROM webhook_events WHERE seq IN (
              SELECT e.seq FROM webhook_events e WHERE e.created_at < ? AND NOT EXISTS (
                SELECT 1 FROM webhook_subscriptions s JOIN webhook_deliveries d
                  ON d.subscription_id = s.id AND d.event_id = e.event_id)
              LIMIT ?)`,
          )
          .run(before, limit);
        return finished.length;
      }),
    );
  }

  listDeliveries(subscriptionId: string, limit: number): Promise<WebhookDelivery[]> {
    return settle(() => {
      const rows = this.#all<WebhookDeliveryRow>(
        `SELECT subscription_id, event_id, type, status, attempts, next_attempt_at, created_at,
           updated_at
         FROM webhook_deliveries WHERE subscription_id = ?
         ORDER BY created_at DESC, event_id DESC LIMIT ?`,
        subscriptionId,
        limit,
      );
      const attempts = this.#all<WebhookAttemptRow>(
        `SELECT * FROM webhook_attempts WHERE subscription_id = ?
           AND event_id IN (SELECT value FROM json_each(?))`,
        subscriptionId,
        JSON.stringify(rows.map((row) => row.event_id)),
      );
      return deliveriesFromRows(rows, attempts);
    });
  }
}
