/**
 * The `notify:<kind>` subscriptions a configured notifier needs: one per kind, in open mode (every
 * tenant's events), made at start by each `rein serve` and `rein worker`. Idempotent across
 * restarts and processes: the id is derived from the kind, so a second create of it fails and
 * the one that exists is kept.
 */
import { randomBytes } from "node:crypto";
import type { WebhookEventType, WebhookStore } from "@rein/core/store";
import { NOTIFY_SCHEME } from "./notifier.ts";

/** The fixed id of the subscription of notifier `kind`. */
export function notifySubscriptionId(kind: string): string {
  return `wh_notify_${kind}`;
}

const sameEvents = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && [...a].sort().join(",") === [...b].sort().join(",");

/**
 * Makes sure the subscription of notifier `kind` exists with `events`. One whose events differ
 * (the config changed) is replaced: its pending deliveries are dropped with it.
 *
 * @returns `created`, `kept` or `replaced`.
 */
export async function ensureNotifySubscription(
  store: WebhookStore,
  kind: string,
  events: readonly WebhookEventType[],
): Promise<"created" | "kept" | "replaced"> {
  const id = notifySubscriptionId(kind);
  const wanted = [...new Set(events)];
  const existing = await store.getSubscription(id);
  if (existing && sameEvents(existing.events, wanted)) return "kept";
  if (existing) await store.deleteSubscription(id);
  try {
    await store.createSubscription({
      id,
      tenant: null,
      url: `${NOTIFY_SCHEME}${kind}`,
      events: wanted,
      graphs: [],
      createdAt: new Date().toISOString(),
      createdBy: "rein:notify",
      // Never used to sign (a notifier is not called over HTTP); a subscription row needs one.
      secret: `whsec_${randomBytes(24).toString("base64")}`,
      previousSecret: null,
      previousSecretUntil: null,
    });
  } catch (error) {
    // Another process made it at the same moment: theirs stands.
    if (await store.getSubscription(id)) return "kept";
    throw error;
  }
  return existing ? "replaced" : "created";
}
