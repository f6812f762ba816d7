/**
 * Per-thread serialization across processes: a call holds the thread's lease, renews it while it
 * works, and releases it when done. A crashed owner's lease expires and another process takes
 * over. The lease's fencing token goes with every write of the call (see {@link fencedStore}), so
 * an owner that was paused past its lease cannot overwrite the new owner's work when it wakes.
 *
 * Within one process, calls on one thread of one store object line up here rather than at the
 * store: the first takes the store's lease, the others wait their turn without polling the
 * store, and a call that ends while another waits hands its lease on as it is — same owner,
 * same fence, renewals running — so the next call starts with no store round trip.
 */
import { hasCapability } from "../checkpoint/capabilities.ts";
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { fencedStore } from "../checkpoint/fenced.ts";
import type { RuntimeStore, Fence, LeaseReadResults, LeaseReads } from "../checkpoint/types.ts";
import { FencedOutError, ThreadBusyError } from "../errors.ts";
import type { LeaseSettings } from "../graph/options.ts";
import type { ThreadId } from "../ids.ts";

/** Defaults: 30 s leases, renewed every 10 s; wait up to 30 s for a busy thread. */
export const defaultLease: LeaseSettings = { ttlMs: 30_000, waitMs: 30_000 };

/** Identity of this process in lease rows. */
export const processOwner = `${process.pid}-${randomUUID().slice(0, 8)}`;

/** Lease owners this process has named: each store lease it takes gets the next one. */
let ownersNamed = 0;

/** A held lease, as the work done under it sees it. */
export interface HeldLease {
  /** The lease proof every write of the call carries. */
  readonly fence: Fence;
  /** The store with {@link HeldLease.fence} attached to every write. */
  readonly store: RuntimeStore;
  /** Aborted when the lease is lost (renewal refused, or not renewed before it expired). */
  readonly signal: AbortSignal;
  /** Whether {@link HeldLease.signal} aborted (a renewal refused or too late), without making it. */
  readonly aborted: boolean;
  /** Whether the lease was lost; work must stop writing and the call must fail. */
  readonly lost: boolean;
  /** Throws {@link FencedOutError} when the lease was lost. */
  assertHeld(): void;
  /**
   * Whether a write that carried `releaseLease` ended the lease already (the call's last write):
   * nothing is left to release, and renewals stopped.
   */
  readonly released: boolean;
  /**
   * Whether another call of this process waits for the thread: the call's last write should then
   * keep the lease, which passes to that call when this one ends instead of being released.
   */
  readonly awaited: boolean;
}

/** The calls of this process on one thread of one store: who holds the lease, who waits. */
class ThreadLine {
  /** The store lease the line holds, kept between calls only while one is handed on. */
  lease: ProcessLease | null = null;
  /** Calls waiting their turn, first come first served. */
  readonly waiting: Array<() => void> = [];
}

/** The lines of each store object (a store object is one client of one database). */
const linesOf = new WeakMap<RuntimeStore, Map<ThreadId, ThreadLine>>();

/** A store lease this process holds, renewed on a timer until released or lost. */
class ProcessLease implements HeldLease {
  readonly fence: Fence;
  readonly store: RuntimeStore;
  released = false;
  #heldUntil: number;
  #lostWith: FencedOutError | undefined;
  // Created when first asked for: most calls never look at the signal, and making one shows in
  // profiles of short calls.
  #controller: AbortController | undefined;
  readonly #renewal: NodeJS.Timeout;

  constructor(
    base: RuntimeStore,
    threadId: ThreadId,
    readonly owner: string,
    token: number,
    private readonly line: ThreadLine,
    settings: LeaseSettings,
  ) {
    this.fence = { threadId, token };
    this.#heldUntil = Date.now() + settings.ttlMs;
    this.store = fencedStore(base, this.fence, () => this.endedByWrite());
    this.#renewal = setInterval(
      () => this.renew(base, settings),
      Math.max(50, Math.floor(settings.ttlMs / 3)),
    );
    this.#renewal.unref();
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#lostWith) this.#controller.abort(this.#lostWith);
    }
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#lostWith !== undefined;
  }

  get lost(): boolean {
    return this.#lostWith !== undefined || Date.now() >= this.#heldUntil;
  }

  get awaited(): boolean {
    return this.line.waiting.length > 0;
  }

  /** Whether the lease can go on to another call: neither released by a write nor lost. */
  get passable(): boolean {
    return !this.released && !this.lost;
  }

  assertHeld(): void {
    if (this.lost) throw new FencedOutError(this.fence.threadId, this.fence.token, null, true);
  }

  /** A write that carried `releaseLease` ended the lease: nothing to renew or release. */
  endedByWrite(): void {
    this.released = true;
    clearInterval(this.#renewal);
  }

  /** Stops renewing (the lease is being released, or was lost). */
  stop(): void {
    clearInterval(this.#renewal);
  }

  private renew(base: RuntimeStore, settings: LeaseSettings): void {
    const asked = Date.now();
    base.renewLease(this.fence.threadId, this.owner, settings.ttlMs).then(
      (renewed) => {
        if (renewed) this.#heldUntil = asked + settings.ttlMs;
        else this.lose();
      },
      // The store is unreachable: the lease is still ours until it expires; past that, lost.
      () => {
        if (Date.now() >= this.#heldUntil) this.lose();
      },
    );
  }

  private lose(): void {
    if (this.#lostWith) return;
    this.#lostWith = new FencedOutError(this.fence.threadId, this.fence.token, null, true);
    this.#controller?.abort(this.#lostWith);
  }
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
 * A call of this process that already holds the thread's lease of the same store object makes
 * this one wait its turn in the process (see {@link ThreadLine}); the lease then passes on to it
 * unless it was released by the other call's last write or lost.
 *
 * @throws ThreadBusyError when another owner keeps the lease longer than `settings.waitMs`.
 */
export async function withLease<T>(
  store: RuntimeStore,
  threadId: ThreadId,
  settings: LeaseSettings,
  fn: (lease: HeldLease, reads: LeaseReadResults | undefined) => Promise<T>,
  reads?: LeaseReads,
): Promise<T> {
  const deadline = Date.now() + settings.waitMs;
  let lines = linesOf.get(store);
  if (!lines) linesOf.set(store, (lines = new Map<ThreadId, ThreadLine>()));
  const line = await takeTurn(store, lines, threadId, deadline);
  let lease: ProcessLease;
  // What the store read with the lease, when this call took it from the store (a handed lease
  // comes with nothing: the previous call's reads are its own).
  let fresh: LeaseReadResults | undefined;
  try {
    // A handed lease can be lost between the hand-over and this turn (a refused renewal).
    if (line.lease && !line.lease.passable) {
      const stale = line.lease;
      line.lease = null;
      await retire(store, stale, settings);
    }
    if (line.lease) lease = line.lease;
    else
      ({ lease, reads: fresh } = await acquire(store, threadId, line, settings, deadline, reads));
  } catch (error) {
    line.lease = null;
    passTurn(lines, threadId, line);
    throw error;
  }
  line.lease = lease;
  try {
    // Not re-checked here: every write of `fn` was checked against the fence, so a result whose
    // writes all passed is true even if the lease ran out after the last of them.
    return await fn(lease, fresh);
  } finally {
    await endTurn(store, lines, threadId, line, lease, settings);
  }
}

/**
 * Waits until no other call of this process works on the thread, and returns its line. The
 * first call finds no line and goes at once; later ones queue.
 *
 * @throws ThreadBusyError when the turn does not come before `deadline`.
 */
function takeTurn(
  store: RuntimeStore,
  lines: Map<ThreadId, ThreadLine>,
  threadId: ThreadId,
  deadline: number,
): ThreadLine | Promise<ThreadLine> {
  const line = lines.get(threadId);
  if (!line) {
    const fresh = new ThreadLine();
    lines.set(threadId, fresh);
    return fresh;
  }
  return new Promise((resolve, reject) => {
    const turn = (): void => {
      clearTimeout(timer);
      resolve(line);
    };
    const timer = setTimeout(
      () => {
        line.waiting.splice(line.waiting.indexOf(turn), 1);
        const owner = line.lease?.owner;
        if (owner !== undefined) reject(new ThreadBusyError(threadId, owner));
        else void busyError(store, threadId).then(reject);
      },
      Math.max(0, deadline - Date.now()),
    );
    line.waiting.push(turn);
  });
}

/**
 * Takes the store's lease, retrying while another owner holds it, until `deadline`. With `reads`
 * and a store that can, the call's first reads come back in the same round trip.
 */
async function acquire(
  store: RuntimeStore,
  threadId: ThreadId,
  line: ThreadLine,
  settings: LeaseSettings,
  deadline: number,
  reads: LeaseReads | undefined,
): Promise<{ lease: ProcessLease; reads: LeaseReadResults | undefined }> {
  const owner = `${processOwner}:${++ownersNamed}`;
  const take = async (): Promise<{ token: number; reads?: LeaseReadResults } | null> => {
    if (reads && hasCapability(store, "leaseReads"))
      return store.acquireLeaseAndRead(threadId, owner, settings.ttlMs, reads);
    const token = await store.acquireLease(threadId, owner, settings.ttlMs);
    return token === null ? null : { token };
  };
  let delay = 2;
  let taken: { token: number; reads?: LeaseReadResults } | null;
  while ((taken = await take()) === null) {
    if (Date.now() >= deadline) throw await busyError(store, threadId);
    await sleep(delay);
    delay = Math.min(delay * 2, 100);
  }
  const lease = new ProcessLease(store, threadId, owner, taken.token, line, settings);
  return { lease, reads: taken.reads };
}

/** The error of a thread another owner keeps busy, naming that owner when the store can. */
async function busyError(store: RuntimeStore, threadId: ThreadId): Promise<ThreadBusyError> {
  const held = hasCapability(store, "leaseStatus")
    ? await store.getLease(threadId).catch(() => undefined)
    : undefined;
  return new ThreadBusyError(threadId, held?.owner ?? null);
}

/**
 * Ends a call's turn: hands the lease to the next waiting call when it is still held, or else
 * releases it (unless the call's last write did) and lets the next call take its own.
 */
async function endTurn(
  store: RuntimeStore,
  lines: Map<ThreadId, ThreadLine>,
  threadId: ThreadId,
  line: ThreadLine,
  lease: ProcessLease,
  settings: LeaseSettings,
): Promise<void> {
  if (line.waiting.length > 0 && lease.passable) {
    (line.waiting.shift() as () => void)();
    return;
  }
  line.lease = null;
  await retire(store, lease, settings);
  passTurn(lines, threadId, line);
}

/** Stops renewing `lease` and releases it at the store, unless a write released it already. */
async function retire(
  store: RuntimeStore,
  lease: ProcessLease,
  settings: LeaseSettings,
): Promise<void> {
  lease.stop();
  if (lease.released) return;
  const { threadId } = lease.fence;
  await store
    .releaseLease(threadId, lease.owner)
    .catch(() => releaseLater(store, threadId, lease.owner, Date.now() + settings.ttlMs));
}

/** Lets the next waiting call go, or forgets the line when nobody waits. */
function passTurn(lines: Map<ThreadId, ThreadLine>, threadId: ThreadId, line: ThreadLine): void {
  const next = line.waiting.shift();
  if (next) next();
  else lines.delete(threadId);
}

/**
 * Keeps trying to release a lease whose release failed (the store was unreachable), in the
 * background, until it succeeds or the lease would have expired anyway: a retry of the call —
 * the usual next step after a store outage — then need not wait out the whole lease.
 */
function releaseLater(store: RuntimeStore, threadId: ThreadId, owner: string, until: number): void {
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
