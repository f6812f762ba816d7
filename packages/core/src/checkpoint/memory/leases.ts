/** Thread leases of {@link MemorySaver}, with fencing tokens that only grow. */
import { validateThreadId, type ThreadId } from "../../ids.ts";
import type { Fence, LeaseRecord } from "../types.ts";
import type { MemoryTables } from "./tables.ts";

/**
 * Takes the lease if it is free, expired or already `owner`'s; its new token, or null. `now`
 * (epoch ms) is the store's clock.
 */
export function acquireLease(
  db: MemoryTables,
  threadId: ThreadId,
  owner: string,
  ttlMs: number,
  now: number,
): number | null {
  validateThreadId(threadId);
  const lease = db.leases.get(threadId);
  if (lease && lease.owner !== owner && lease.expiresAt > now) return null;
  const token = (lease?.token ?? 0) + 1;
  db.leases.set(threadId, { owner, expiresAt: now + ttlMs, token });
  return token;
}

/** Extends `owner`'s unexpired lease; false once it expired or changed hands. */
export function renewLease(
  db: MemoryTables,
  threadId: ThreadId,
  owner: string,
  ttlMs: number,
  now: number,
): boolean {
  const lease = db.leases.get(threadId);
  if (!lease || lease.owner !== owner || lease.expiresAt <= now) return false;
  lease.expiresAt = now + ttlMs;
  return true;
}

/** Releases `owner`'s lease: expired, not deleted, so the token keeps growing. */
export function releaseLease(db: MemoryTables, threadId: ThreadId, owner: string): void {
  const lease = db.leases.get(threadId);
  if (lease?.owner === owner) lease.expiresAt = 0;
}

/**
 * Ends the lease `fence` proves, if it is still the current one (a write carrying
 * `releaseLease`): expired, not deleted, so the token keeps growing.
 */
export function releaseFencedLease(db: MemoryTables, fence: Fence | undefined): void {
  const lease = fence && db.leases.get(fence.threadId);
  if (lease && lease.token === fence.token) lease.expiresAt = 0;
}

/** The lease of the thread unexpired at `now` (epoch ms), if any. */
export function getLease(
  db: MemoryTables,
  threadId: ThreadId,
  now: number,
): LeaseRecord | undefined {
  const lease = db.leases.get(threadId);
  if (!lease || lease.expiresAt <= now) return undefined;
  return {
    owner: lease.owner,
    expiresAt: new Date(lease.expiresAt).toISOString(),
    token: lease.token,
  };
}
