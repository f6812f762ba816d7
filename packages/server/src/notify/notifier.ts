import type { WebhookBody } from "../webhooks/payload.ts";
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
