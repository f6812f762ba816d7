/**
 * Per-thread serialization across processes: a run holds the thread's lease, renews it while it
 * works, and releases it when done. A crashed owner's lease expires and another process takes over.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Checkpointer } from "../checkpoint/types.ts";
import { ThreadBusyError } from "../errors.ts";
import type { ThreadId } from "../ids.ts";

/** How long a lease lasts without renewal, and how long a caller waits for a busy thread. */
export interface LeaseSettings {
  ttlMs: number;
  waitMs: number;
}

/** Defaults: 30 s leases, renewed every 10 s; wait up to 30 s for a busy thread. */
export const defaultLease: LeaseSettings = { ttlMs: 30_000, waitMs: 30_000 };

/** Identity of this process in lease rows. */
export const processOwner = `${process.pid}-${randomUUID().slice(0, 8)}`;

/**
 * Runs `fn` while holding the thread's lease.
 *
 * @throws ThreadBusyError when another owner keeps the lease longer than `settings.waitMs`.
 */
export async function withLease<T>(
  saver: Checkpointer,
  threadId: ThreadId,
  settings: LeaseSettings,
  fn: () => Promise<T>,
): Promise<T> {
  const owner = `${processOwner}:${randomUUID().slice(0, 8)}`;
  const deadline = Date.now() + settings.waitMs;
  let delay = 2;
  while (!(await saver.acquireLease(threadId, owner, settings.ttlMs))) {
    if (Date.now() >= deadline)
      throw new ThreadBusyError(threadId, (await saver.getLease(threadId))?.owner ?? null);
    await sleep(delay);
    delay = Math.min(delay * 2, 100);
  }
  const renew = setInterval(
    () => {
      saver.renewLease(threadId, owner, settings.ttlMs).catch(() => undefined);
    },
    Math.max(50, Math.floor(settings.ttlMs / 3)),
  );
  renew.unref();
  try {
    return await fn();
  } finally {
    clearInterval(renew);
    await saver.releaseLease(threadId, owner);
  }
}
