/**
 * The webhooks screen (admin tokens): the tenant's subscriptions, and for the one chosen its
 * delivery log — each event's status, attempts and the receiver's answers — so an admin sees why
 * a receiver did not hear of a question without reading the database.
 */
import { useCallback, useEffect, useState } from "react";
import type { Webhook, WebhookDelivery } from "@rein/client";
import { describeError } from "../errors.ts";
import { LogTable } from "../parts/LogTable.tsx";
import { href } from "../router.ts";
import type { Session } from "../session.ts";

/** How often the open delivery log re-reads (deliveries retry in the background). */
const REFRESH_MS = 2000;

/** Whether a session may see subscriptions: the routes need the `admin` scope (open mode has all). */
export function canManageWebhooks(session: Session): boolean {
  return session.open || session.me.scopes.includes("admin");
}

/** The subscriptions, and the delivery log of `subscriptionId` when one is chosen. */
export function WebhooksScreen({
  session,
  subscriptionId,
}: {
  session: Session;
  subscriptionId: string | null;
}) {
  const [subscriptions, setSubscriptions] = useState<Webhook[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  const allowed = canManageWebhooks(session);

  useEffect(() => {
    // Without the scope the server would refuse: the screen says so without asking.
    if (!allowed) return;
    session.client.listWebhooks().then(
      (items) => {
        setSubscriptions(items);
        setError(null);
      },
      (e: unknown) => setError(describeError(e)),
    );
  }, [session.client, allowed]);

  if (!allowed)
    return (
      <p role="alert" className="error">
        Webhooks need a token with the admin scope; ask an admin of your tenant.
      </p>
    );
  return (
    <section className="webhooks">
      <h1>Webhooks</h1>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {subscriptions === null && !error && <p className="loading">Loading subscriptions…</p>}
      {subscriptions?.length === 0 && (
        <p className="hint">
          No subscriptions yet: create one with <code>rein webhooks add</code> or{" "}
          <code>POST /webhooks</code>.
        </p>
      )}
      {subscriptions && subscriptions.length > 0 && (
        <LogTable label="Subscriptions" columns={["Receiver", "Events", "Graphs", "Created"]}>
          {subscriptions.map((s) => (
            <tr key={s.id} aria-current={s.id === subscriptionId ? "true" : undefined}>
              <td data-label="Receiver">
                <a href={href({ screen: "webhooks", subscriptionId: s.id })}>{s.url}</a>
              </td>
              <td data-label="Events">{s.events.join(", ")}</td>
              <td data-label="Graphs">{s.graphs.length > 0 ? s.graphs.join(", ") : "all"}</td>
              <td data-label="Created">
                {new Date(s.createdAt).toLocaleString()} by {s.createdBy}
              </td>
            </tr>
          ))}
        </LogTable>
      )}
      {subscriptionId && (
        <DeliveryLog
          session={session}
          subscription={subscriptions?.find((s) => s.id === subscriptionId) ?? null}
          subscriptionId={subscriptionId}
        />
      )}
    </section>
  );
}

/** What a delivery's status means, in words. */
function statusText(delivery: WebhookDelivery): string {
  if (delivery.status === "delivered") return "delivered";
  if (delivery.status === "dead") return `dead after ${delivery.attempts} attempts`;
  const next = delivery.nextAttemptAt
    ? `, next attempt ${new Date(delivery.nextAttemptAt).toLocaleTimeString()}`
    : "";
  return `pending${delivery.attempts > 0 ? ` (${delivery.attempts} failed)` : ""}${next}`;
}

/** One attempt's outcome: the receiver's status code, or why none came. */
function attemptText(attempt: WebhookDelivery["log"][number]): string {
  const answer = attempt.statusCode !== null ? `HTTP ${attempt.statusCode}` : "no answer";
  return `#${attempt.attempt} ${answer}${attempt.error ? `: ${attempt.error}` : ""} (${attempt.durationMs} ms)`;
}

/** The newest deliveries of one subscription, re-read every few seconds while shown. */
function DeliveryLog({
  session,
  subscription,
  subscriptionId,
}: {
  session: Session;
  subscription: Webhook | null;
  subscriptionId: string;
}) {
  const [deliveries, setDeliveries] = useState<WebhookDelivery[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    try {
      setDeliveries(await session.client.listWebhookDeliveries(subscriptionId, { limit: 50 }));
      setError(null);
    } catch (e) {
      setError(describeError(e));
    }
  }, [session.client, subscriptionId]);
  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [load]);

  return (
    <section aria-label="Delivery log">
      <h2>Deliveries to {subscription?.url ?? subscriptionId}</h2>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {deliveries?.length === 0 && <p className="hint">No events delivered to it yet.</p>}
      {deliveries && deliveries.length > 0 && (
        <LogTable
          label="Deliveries, newest first"
          columns={["Event", "Type", "Status", "Attempts"]}
        >
          {deliveries.map((d) => (
            <tr key={d.eventId} className={d.status === "dead" ? "broken" : undefined}>
              <td data-label="Event">
                <code>{d.eventId}</code>
                <br />
                {new Date(d.createdAt).toLocaleString()}
              </td>
              <td data-label="Type">{d.type}</td>
              <td data-label="Status">{statusText(d)}</td>
              <td data-label="Attempts">
                {d.log.length === 0 ? (
                  "none yet"
                ) : (
                  <ol className="attempts">
                    {d.log.map((a) => (
                      <li key={a.attempt}>{attemptText(a)}</li>
                    ))}
                  </ol>
                )}
              </td>
            </tr>
          ))}
        </LogTable>
      )}
    </section>
  );
}
