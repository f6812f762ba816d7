/**
 * The memory store's side records (capability `sideRecords`): one Map keyed by tenant, kind and
 * key, each entry with its expiry and the thread it goes with.
 */
import type { ThreadId } from "../../ids.ts";
import type { SideRecordWrite } from "../types.ts";
import type { MemoryTables, SideRow } from "./tables.ts";

/** The Map key of `(tenant, kind, key)`: a null tenant never meets a tenant named `""`. */
export function sideKey(tenant: string | null, kind: string, key: string): string {
  return `${tenant === null ? "-" : `+${tenant}`}\u0000${kind}\u0000${key}`;
}

/** The unexpired row under `(tenant, kind, key)` at `now` (epoch ms). */
function live(db: MemoryTables, slot: string, now: number): SideRow | undefined {
  const row = db.sideRecords.get(slot);
  return row && (row.expiresAt === null || row.expiresAt > now) ? row : undefined;
}

/** See `SideRecordStore.getSideRecord`. */
export function getSideRecord(
  db: MemoryTables,
  now: number,
  tenant: string | null,
  kind: string,
  key: string,
): { value: unknown } | undefined {
  const row = live(db, sideKey(tenant, kind, key), now);
  return row ? { value: db.decode(row.data) } : undefined;
}

/** See `SideRecordStore.putSideRecord`. */
export function putSideRecord(
  db: MemoryTables,
  now: number,
  record: SideRecordWrite,
): { value: unknown; created: boolean } {
  const slot = sideKey(record.tenant, record.kind, record.key);
  const held = live(db, slot, now);
  if (held) return { value: db.decode(held.data), created: false };
  const data = db.encode(record.value);
  db.sideRecords.set(slot, {
    data,
    expiresAt: record.expiresAt === null ? null : Date.parse(record.expiresAt),
    threadId: record.threadId ?? null,
  });
  return { value: db.decode(data), created: true };
}

/** Deletes the side records that go with `threadId` (with the thread). */
export function deleteThreadSideRecords(db: MemoryTables, threadId: ThreadId): void {
  for (const [slot, row] of db.sideRecords)
    if (row.threadId === threadId) db.sideRecords.delete(slot);
}
