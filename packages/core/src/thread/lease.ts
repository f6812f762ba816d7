/**
 * Per-thread serialization across processes: a call holds the thread's lease, renews it while it
 * works, and releases it when done. A crashed owner's lease expires and another process takes
 * over. The lease's fencing token goes with every write of the call (see {@link fencedStore}), so
 * an owner that was paused past its lease cannot overwrite the new owner's work when it wakes.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { fencedStore } from "../checkpoint/fenced.ts";
import type { Checkpointer, Fence } from "../checkpoint/types.ts";
import { FencedOutError, ThreadBusyError } from "../errors.ts";
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

/** A held lease, as the work done under it sees it. */
export interface HeldLease {
  /** The lease proof every write of the call carries. */
  readonly fence: Fence;
  /** The store with {@link HeldLease.fence} attached to every write. */
  readonly store: Checkpointer;
  /** Aborted when the lease is lost (renewal refused, or not renewed before it expired). */
  readonly signal: AbortSignal;
  /** Whether the lease was lost; work must stop writing and the call must fail. */
  readonly lost: boolean;
  /** Throws {@link FencedOutError} when the lease was lost. */
  assertHeld(): void;
  /**
   * Whether a write that carried `releaseLease` ended the lease already (the call's last write):
   * nothing is left to release, and renewals stopped.
   */
  readonly released: boolean;
}

/**
 * Runs `fn` while holding the thread's lease.
 *
 * Renewal runs every third of the lease time. When the store refuses a renewal (another process
 * took the lease) or renewals keep failing until the lease has expired, the lease counts as lost:
 * {@link HeldLease.signal} aborts, which reaches node code as `ctx.signal`, and the run stops
 * without recording anything more (see `runStream`). A failed release never replaces the call's
 * result: the lease simply expires.
 *
 * @throws ThreadBusyError when another owner keeps the lease longer than `settings.waitMs`.
 */
export async function withLease<T>(
  store: Checkpointer,
  threadId: ThreadId,
  settings: LeaseSettings,
  fn: (lease: HeldLease) => Promise<T>,
): Promise<T> {
  const owner = `${processOwner}:${randomUUID().slice(0, 8)}`;
  const deadline = Date.now() + settings.waitMs;
  let delay = 2;
  let token: number | null;
  while ((token = await store.acquireLease(threadId, owner, settings.ttlMs)) === null) {
    if (Date.now() >= deadline)
      throw new ThreadBusyError(threadId, (await store.getLease(threadId))?.owner ?? null);
    await sleep(delay);
    delay = Math.min(delay * 2, 100);
  }
  const fence: Fence = { threadId, token };
  const controller = new AbortController();
  let heldUntil = Date.now() + settings.ttlMs;
  let released = false;
  const endedByWrite = (): void => {
    released = true;
    clearInterval(renew);
  };
  const lease: HeldLease = {
    fence,
    store: fencedStore(store, fence, endedByWrite),
    signal: controller.signal,
    get released() {
      return released;
    },
    get lost() {
      return controller.signal.aborted || Date.now() >= heldUntil;
    },
    assertHeld() {
      if (this.lost) throw new FencedOutError(threadId, token, null);
    },
  };
  const lose = (): void => {
    if (!controller.signal.aborted)
      controller.abort(new FencedOutError(threadId, fence.token, null));
  };
  const renew = setInterval(
    () => {
      const asked = Date.now();
      store.renewLease(threadId, owner, settings.ttlMs).then(
        (renewed) => {
          if (renewed) heldUntil = asked + settings.ttlMs;
          else lose();
        },
        // The store is unreachable: the lease is still ours until it expires; past that, lost.
        () => {
          if (Date.now() >= heldUntil) lose();
        },
      );
    },
    Math.max(50, Math.floor(settings.ttlMs / 3)),
  );
  renew.unref();
  try {
    // Not re-checked here: every write of `fn` was checked against the fence, so a result whose
    // writes all passed is true even if the lease ran out after the last of them.
    return await fn(lease);
  } finally {
    clearInterval(renew);
    if (!released)
      await store
        .releaseLease(threadId, owner)
        .catch(() => releaseLater(store, threadId, owner, Date.now() + settings.ttlMs));
  }
}

/**
 * Keeps trying to release a lease whose release failed (the store was unreachable), in the
 * background, until it succeeds or the lease would have expired anyway: a retry of the call —
 * the usual next step after a store outage — then need not wait out the whole lease.
 */
function releaseLater(store: Checkpointer, threadId: ThreadId, owner: string, until: number): void {
  let delay = 50;
  const attempt = (): void => {
    if (Date.now() >= until) return;
    store.releaseLease(threadId, owner).catch(() => {
      delay = Math.min(delay * 2, 1000);
      setTimeout(attempt, delay).unref();
    });
  };
  setTimeout(attempt, delay).unref();
}
