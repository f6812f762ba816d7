/**
 * The webhook tables of the store a server runs on: found through the store's declared
 * `webhookOutbox` capability, so any store that declares it (not only the shipped ones) has
 * webhooks.
 */
import { hasCapability, type RuntimeStore, type Serializer } from "@rein/core";
import type { WebhookStore } from "@rein/core/store";

/** A store's webhook tables and the serializer its events' records are encoded with. */
export interface WebhookBackend {
  webhooks: WebhookStore;
  serializer: Serializer;
}

/** The webhook tables of `store`, or `null` when it does not declare the `webhookOutbox` capability. */
export function webhookBackendOf(store: RuntimeStore): WebhookBackend | null {
  if (!hasCapability(store, "webhookOutbox")) return null;
  return { webhooks: store.webhooks, serializer: store.serializer };
}
