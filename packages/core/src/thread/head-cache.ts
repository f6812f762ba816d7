/**
 * Head checkpoints this process has decoded, kept per store so the next call on the thread can
 * hand the store the one it holds (`getThreadHead(…, known)`) instead of reading and decoding it
 * again. A committed checkpoint never changes, so the store only compares ids; what the cache
 * saves is the decode of the step's task list, which is what grows with a step's width (answering
 * one of 1,000 paused tasks would otherwise decode all 1,000 task specs on every answer).
 *
 * A cached checkpoint is shared by every later call that gets it back, so it is frozen, and the
 * `Send` arguments inside it are copied before node code sees them ({@link taskArgument}).
 */
import type { RuntimeStore, CheckpointRecord, TaskSpec } from "../checkpoint/types.ts";
import type { ThreadId } from "../ids.ts";

/** How many threads' heads one store's cache keeps (least recently used go first). */
export const HEAD_CACHE_THREADS = 64;

/** Checkpoints handed out by a cache: frozen, and shared between calls. */
const shared = new WeakSet<CheckpointRecord>();

/** The most recently used root-stream heads of one store's threads. */
export class HeadCache {
  readonly #heads = new Map<ThreadId, CheckpointRecord>();

  constructor(private readonly capacity: number = HEAD_CACHE_THREADS) {}

  /** The cached head of `threadId`, if any (marks it recently used). */
  get(threadId: ThreadId): CheckpointRecord | undefined {
    const head = this.#heads.get(threadId);
    if (head !== undefined) {
      this.#heads.delete(threadId);
      this.#heads.set(threadId, head);
    }
    return head;
  }

  /**
   * Keeps `head`, freshly decoded by the store, as the thread's head. It is frozen from here on:
   * later calls share it.
   */
  remember(head: CheckpointRecord): void {
    share(head);
    this.#heads.delete(head.threadId);
    this.#heads.set(head.threadId, head);
    if (this.#heads.size > this.capacity) {
      const oldest = this.#heads.keys().next();
      if (!oldest.done) this.#heads.delete(oldest.value);
    }
  }
}

const caches = new WeakMap<RuntimeStore, HeadCache>();

/** The head cache of `store` (one per store object, made on first use). */
export function headCacheOf(store: RuntimeStore): HeadCache {
  let cache = caches.get(store);
  if (cache === undefined) {
    cache = new HeadCache();
    caches.set(store, cache);
  }
  return cache;
}

/**
 * The input a `Send` task's node gets: its argument, copied when the checkpoint is shared by a
 * cache, so node code that changes its argument cannot change what a later call starts from.
 */
export function taskArgument(head: CheckpointRecord, task: TaskSpec): unknown {
  return shared.has(head) && typeof task.arg === "object" && task.arg !== null
    ? structuredClone(task.arg)
    : task.arg;
}

/** Freezes the record's own structure (not the `Send` arguments, which are copied on use). */
function share(head: CheckpointRecord): void {
  for (const task of head.next) Object.freeze(task);
  Object.freeze(head.next);
  Object.freeze(head.versions);
  Object.freeze(head.metadata);
  Object.freeze(head);
  shared.add(head);
}
