/**
 * Secrets and signatures of the Standard Webhooks scheme, through its reference library.
 */
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import type { StoredWebhookSubscription } from "@rein/core/store";

/** A new signing secret: `whsec_` and 24 random bytes in base64, as Standard Webhooks writes them. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

/** The three headers of one attempt. */
export interface WebhookHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/**
 * Signs one attempt: the stable event id, the attempt's time, the body. While a rotated-out
 * secret is within its grace period, its signature is sent too (space-separated), so a receiver
 * verifies with either secret.
 */
export function signAttempt(
  subscription: StoredWebhookSubscription,
  eventId: string,
  at: Date,
  body: string,
): WebhookHeaders {
  const secrets = [subscription.secret];
  if (
    subscription.previousSecret !== null &&
    subscription.previousSecretUntil !== null &&
    subscription.previousSecretUntil > at.toISOString()
  )
    secrets.push(subscription.previousSecret);
  return {
    "webhook-id": eventId,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": secrets
      .map((secret) => new Webhook(secret).sign(eventId, at, body))
      .join(" "),
  };
}
