/**
 * The server's side records (the store's `sideRecords` capability): what its features keep of
 * their own about a thread — idempotency claims, spent decision links, posted Slack messages —
 * keyed within the feature's kind by the thread and the feature's key, and deleted with the
 * thread.
 */
import type { SideRecordStore, SideRecordWrite } from "@rein/core/store";

/** The kinds of the server's side records: one namespace per feature. */
export const SIDE_KINDS = {
  idempotency: "http:idempotency",
  links: "http:links",
  slack: "notify:slack",
} as const;

/** One kind of the server's side records. */
export type SideKind = (typeof SIDE_KINDS)[keyof typeof SIDE_KINDS];

/** Where a feature's record about a thread is: its tenant, kind, thread and key. */
export interface ThreadSlot {
  tenant: string | null;
  kind: SideKind;
  threadId: string;
  key: string;
}

/**
 * The store key of a slot: the thread first, length-prefixed, so one thread's records never meet
 * another's whatever either key holds (and no NUL, which Postgres text cannot store).
 */
function keyOf(slot: ThreadSlot): string {
  return `${slot.threadId.length}:${slot.threadId}:${slot.key}`;
}

/**
 * A store of side records. (Versions before side records kept these records in `ctx.once`
 * slots; the stores' migrations copy them here — SQLite 15, Postgres 17 — so nothing reads
 * those slots any more.)
 */
export type SlotStore = SideRecordStore;

/** The record in `slot`, if one is stored and unexpired. */
export function readSlot(
  store: SlotStore,
  slot: ThreadSlot,
): Promise<{ value: unknown } | undefined> {
  return store.getSideRecord(slot.tenant, slot.kind, keyOf(slot));
}

/**
 * Stores `value` in `slot` unless a record holds it (first write wins, on every store) and
 * returns the stored value; it lasts until `expiresAt` (ISO) or, without one, until its thread is
 * deleted.
 */
export async function writeSlot(
  store: SlotStore,
  slot: ThreadSlot,
  value: unknown,
  expiresAt: string | null = null,
): Promise<{ value: unknown }> {
  const record: SideRecordWrite = {
    tenant: slot.tenant,
    kind: slot.kind,
    key: keyOf(slot),
    value,
    expiresAt,
    threadId: slot.threadId as SideRecordWrite["threadId"],
  };
  const { value: stored } = await store.putSideRecord(record);
  return { value: stored };
}
