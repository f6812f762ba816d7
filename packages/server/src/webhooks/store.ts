/**
 * The webhook tables of the store a server runs on: the built-in stores each have theirs.
 */
import { MemorySaver, type Checkpointer, type Serializer } from "@rein/core";
import type { WebhookStore } from "@rein/core/store";
import { PostgresSaver, PostgresWebhooks } from "@rein/postgres";
import { SqliteSaver, SqliteWebhooks } from "@rein/sqlite";

/** A store's webhook tables and the serializer its events' records are encoded with. */
export interface WebhookBackend {
  webhooks: WebhookStore;
  serializer: Serializer;
}

/** The webhook tables of `store`, or `null` for a store Rein does not ship (no outbox). */
export function webhookBackendOf(store: Checkpointer): WebhookBackend | null {
  if (store instanceof SqliteSaver)
    return { webhooks: new SqliteWebhooks(store), serializer: store.serializer };
  if (store instanceof PostgresSaver)
    return { webhooks: new PostgresWebhooks(store), serializer: store.serializer };
  if (store instanceof MemorySaver)
    return { webhooks: store.webhooks, serializer: store.serializer };
  return null;
}
