/**
 * The `sideRecords` capability's types: small keyed facts a feature keeps beside the runtime's
 * rows. Kept apart from `types.ts` (which re-exports them) so that file stays one reader's size.
 */
import type { ThreadId } from "../ids.ts";

/**
 * One side record as a feature writes it (see {@link SideRecordStore}): a value a feature keeps
 * beside the runtime's rows — an idempotency claim, a spent link, a chat message it posted.
 * Its key is `(tenant, kind, key)`.
 */
export interface SideRecordWrite {
  /** The tenant the record belongs to (`null`: none, or a key shared across tenants). */
  tenant: string | null;
  /** The feature's namespace, such as `"http:idempotency"`: features never meet each other's keys. */
  kind: string;
  /** The record's key within its tenant and kind (at most 1,000 characters). */
  key: string;
  /** The value, encoded with the store's serializer. */
  value: unknown;
  /**
   * ISO time the record expires at: after it, reads miss it and a write may take its key again.
   * `null`: it lasts until its thread (if any) is deleted.
   */
  expiresAt: string | null;
  /** The thread the record is about: deleting the thread deletes it. */
  threadId?: ThreadId | null;
}

/**
 * Capability `sideRecords`: keyed, tenant-scoped, first-write-wins records with expiry, for
 * features that keep small facts of their own (the server's idempotency claims, spent decision
 * links, Slack messages) instead of borrowing the runtime's `ctx.once` slots.
 */
export interface SideRecordStore {
  /** The unexpired record under `(tenant, kind, key)`, if any. */
  getSideRecord(
    tenant: string | null,
    kind: string,
    key: string,
  ): Promise<{ value: unknown } | undefined>;
  /**
   * Stores `record` unless an unexpired record holds its key, atomically: the first write wins,
   * and the stored value is returned (`created`: whether it is this write's). An expired record
   * is replaced.
   *
   * @throws {NonSerializableError} when the value cannot be encoded; nothing is written.
   */
  putSideRecord(record: SideRecordWrite): Promise<{ value: unknown; created: boolean }>;
}
