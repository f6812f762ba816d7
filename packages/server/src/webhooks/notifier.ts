/**
 * The notifier plumbing: a channel (email, Slack) that the webhook outbox feeds. A subscription
 * whose URL is `notify:<kind>` is delivered by the notifier of that kind instead of an HTTP POST,
 * through the same outbox, claim lease, retries, dead letters and delivery log.
 */
import type { WebhookBody } from "./payload.ts";

/** One outbox event handed to a notifier (the same id on every attempt). */
export interface NotifierDelivery {
  /** The event's `msg_…` id. */
  id: string;
  /** 1 for the first attempt. */
  attempt: number;
  body: WebhookBody;
}

/** A channel that tells people about approval events (email, Slack), fed by the webhook outbox. */
export interface Notifier {
  /** The subscription URL scheme's name: a subscription to `notify:<kind>` is delivered here. */
  readonly kind: string;
  /** Sends one event. Throwing makes the delivery loop retry it with its backoff (then dead-letter it). */
  send(delivery: NotifierDelivery): Promise<void>;
}

/** The URL prefix of a subscription a notifier delivers. */
export const NOTIFY_SCHEME = "notify:";

/** The kind a `notify:<kind>` URL names, or `null` for any other URL. */
export function notifierKind(url: string): string | null {
  return url.startsWith(NOTIFY_SCHEME) ? url.slice(NOTIFY_SCHEME.length) : null;
}
