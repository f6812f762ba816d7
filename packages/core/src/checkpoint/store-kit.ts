/**
 * Helpers for stores: page sizes, keyset cursors, delta-chain rebuilding, the error of a lost
 * compare-and-set, sorted-id search and the sync-to-promise bridge. MemorySaver uses them all;
 * the SQLite and Postgres savers take theirs through `@rein/core/store`.
 */
import {
  CheckpointConflictError,
  FencedOutError,
  InvalidInputError,
  NotFoundError,
} from "../errors.ts";
import type { CheckpointId, ThreadId } from "../ids.ts";

import type {
  CheckpointRecord,
  Fence,
  PendingPage,
  RunRecord,
  StoredInterrupt,
  StreamKey,
} from "./types.ts";

const DEFAULT_PAGE = 50;
const MAX_PAGE = 1000;

/** A page size within bounds: 50 by default, at most 1000. */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return DEFAULT_PAGE;
  return Math.max(1, Math.min(MAX_PAGE, Math.floor(limit)));
}

/** Newest-first order of `[createdAt, id]` keys: negative when `a` comes first. */
export function compareNewestFirst(
  a: readonly [string, string],
  b: readonly [string, string],
): number {
  if (a[0] !== b[0]) return a[0] > b[0] ? -1 : 1;
  if (a[1] !== b[1]) return a[1] > b[1] ? -1 : 1;
  return 0;
}

/** Oldest-first order by `createdAt`, then insertion sequence. */
export function compareOldestFirst(
  a: { createdAt: string; seq: number },
  b: { createdAt: string; seq: number },
): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.seq - b.seq;
}

/** Keyset cursors are opaque to callers: base64url of the JSON key of the last item. */
export function encodeCursor(key: readonly [string, string]): string {
  return Buffer.from(JSON.stringify(key)).toString("base64url");
}

/**
 * The key a cursor encodes, or null for none.
 *
 * @throws {InvalidInputError} for a cursor this store did not make.
 */
export function decodeCursor(cursor: string | null | undefined): [string, string] | null {
  if (!cursor) return null;
  try {
    const key: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString());
    // No key a store makes holds a NUL (PostgreSQL text cannot), so a cursor with one is forged.
    const keyOf = (k: unknown): boolean => typeof k === "string" && !k.includes("\u0000");
    if (Array.isArray(key) && key.length === 2 && key.every(keyOf)) {
      return key as [string, string];
    }
  } catch {
    // Fall through to the error below.
  }
  throw new InvalidInputError(`Invalid cursor ${JSON.stringify(cursor)}.`, { cursor });
}

/**
 * A sequence cursor (audit log): the last sequence number seen.
 *
 * @throws {InvalidInputError} for a cursor this store did not make.
 */
export function decodeSeqCursor(cursor: string | null | undefined): number {
  if (!cursor) return 0;
  const seq = Number(cursor);
  if (!Number.isSafeInteger(seq) || seq < 0) {
    throw new InvalidInputError(`Invalid cursor ${JSON.stringify(cursor)}.`, { cursor });
  }
  return seq;
}

/** Rows of a newest-first keyset page: sorted, cut after the cursor, `limit` long. */
export function keysetPage<T>(
  rows: { key: [string, string]; item: T }[],
  cursor: string | null | undefined,
  limit: number,
): { items: T[]; nextCursor: string | null } {
  const after = decodeCursor(cursor);
  const kept = after ? rows.filter((row) => compareNewestFirst(row.key, after) > 0) : rows;
  kept.sort((a, b) => compareNewestFirst(a.key, b.key));
  const page = kept.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page.map((row) => row.item),
    nextCursor: kept.length > limit && last ? encodeCursor(last.key) : null,
  };
}

/**
 * Rebuilds a channel value from its chain, oldest link first: a `full` value followed by the
 * arrays appended by each `delta`.
 */
export function rebuildChannelValue(
  channel: string,
  chain: readonly { kind: "full" | "delta"; value: unknown }[],
): unknown {
  const [base, ...deltas] = chain;
  if (!base || deltas.length === 0) return base?.value;
  if (!Array.isArray(base.value) && base.value != null) {
    throw new InvalidInputError(`Channel ${channel} has deltas on a value that is not an array.`, {
      channel,
    });
  }
  const out: unknown[] = Array.isArray(base.value) ? [...(base.value as unknown[])] : [];
  for (const delta of deltas) {
    if (Array.isArray(delta.value)) out.push(...(delta.value as unknown[]));
    else out.push(delta.value);
  }
  return out;
}

/** Index of the first element `>= value` in an ascending array. */
export function lowerBound(sorted: readonly string[], value: string): number {
  return lowerBoundBy(sorted, value, (a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The first index of an array sorted by `compare` whose item is not before `value`. */
export function lowerBoundBy<T>(
  sorted: readonly T[],
  value: T,
  compare: (a: T, b: T) => number,
): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(sorted[mid] as T, value) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Inserts into an ascending array; appending (the usual case for new ids) is O(1). */
export function insertSorted<T extends string>(sorted: T[], value: T): void {
  const last = sorted[sorted.length - 1];
  if (last === undefined || last < value) sorted.push(value);
  else sorted.splice(lowerBound(sorted, value), 0, value);
}

/** The error of a lost compare-and-set on a stream head. */
export function conflictError(
  checkpoint: CheckpointRecord,
  expected: CheckpointId | null,
  head: CheckpointId | null,
): CheckpointConflictError {
  return new CheckpointConflictError(
    `Commit of checkpoint ${checkpoint.id} on thread ${checkpoint.threadId} expected head ${expected ?? "(empty)"} but the head is ${head ?? "(empty)"}.`,
    {
      threadId: checkpoint.threadId,
      stream: checkpoint.stream,
      checkpointId: checkpoint.id,
      expectedHeadId: expected,
      headCheckpointId: head,
    },
  );
}

/**
 * Checks a writer's fence against the thread's current fencing token (`null`: no lease row).
 * Call it inside the write's transaction, before writing anything.
 *
 * @throws {FencedOutError} when the tokens differ.
 */
export function checkFence(fence: Fence | undefined, currentToken: number | null): void {
  if (fence !== undefined && fence.token !== currentToken)
    throw new FencedOutError(fence.threadId, fence.token, currentToken);
}

/** Run statuses that are final: a store never changes them again. */
export const FINAL_RUN_STATUSES: ReadonlySet<RunRecord["status"]> = new Set(["done", "cancelled"]);

/**
 * Runs a synchronous store operation as a promise: a throw (a conflict, a value the serializer
 * refuses) becomes a rejection, as it would be from a database driver.
 */
export function settle<T>(operation: () => T): Promise<T> {
  return new Promise<T>((resolve) => resolve(operation()));
}

/** One link of a delta chain as a store reads it: the channel, its kind, its `prev`, its text. */
export interface ChainLink {
  channel: string;
  kind: "full" | "delta";
  prev: string | null;
  value: string;
}

/**
 * Rebuilds each wanted channel from the links a chain query returned (per channel, deepest link
 * first), decoding values with `decode`.
 *
 * @throws {NotFoundError} when a version or a link of its chain is missing.
 */
export function channelValuesFromChains(
  wanted: readonly [channel: string, version: string][],
  links: readonly ChainLink[],
  decode: (text: string) => unknown,
): Record<string, unknown> {
  const chains = new Map<string, ChainLink[]>();
  for (const link of links) {
    let chain = chains.get(link.channel);
    if (!chain) chains.set(link.channel, (chain = []));
    chain.push(link);
  }
  const out: Record<string, unknown> = {};
  for (const [channel, version] of wanted) {
    const chain = chains.get(channel);
    const base = chain?.[0];
    // The deepest link must end the chain: a full blob, or a delta with nothing before it.
    if (!chain || !base || (base.kind === "delta" && base.prev !== null)) {
      throw new NotFoundError("Channel version", `${channel}@${base?.prev ?? version}`);
    }
    out[channel] = rebuildChannelValue(
      channel,
      chain.map((link) => ({ kind: link.kind, value: decode(link.value) })),
    );
  }
  return out;
}

/**
 * One page of a keyset query that fetched `limit + 1` rows: the first `limit` rows, and the
 * cursor of the last of them when the extra row shows there is more.
 */
export function keysetSlice<Row>(
  rows: readonly Row[],
  limit: number,
  cursorOf: (row: Row) => string,
): { rows: Row[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { rows: page, nextCursor: rows.length > limit && last ? cursorOf(last) : null };
}

/**
 * How many links the chain of a channel version has, read from the version itself: the runtime
 * writes a delta as `<checkpointId>~<depth>` (depth deltas since the last full value) and a full
 * value as the bare checkpoint id (one link). A store fetches that many versions by range.
 */
export function chainLengthOfVersion(version: string): number {
  const mark = version.lastIndexOf("~");
  if (mark < 0) return 1;
  const depth = Number(version.slice(mark + 1));
  return Number.isSafeInteger(depth) && depth > 0 ? depth + 1 : 1;
}

/**
 * The chain of `version`, oldest link first, picked out of a range of a channel's versions (any
 * order) by following `prev` links; `undefined` when the range does not hold the whole chain (a
 * forked stream interleaves other branches' versions), so the store reads it link by link.
 */
export function chainFromRange<Link extends Omit<ChainLink, "channel"> & { version: string }>(
  version: string,
  range: readonly Link[],
): Link[] | undefined {
  const byVersion = new Map(range.map((link) => [link.version, link]));
  const chain: Link[] = [];
  let current: string | null = version;
  while (current !== null) {
    const link = byVersion.get(current);
    if (!link) return undefined;
    chain.push(link);
    current = link.kind === "delta" ? link.prev : null;
  }
  return chain.reverse();
}

/**
 * Whether `known`, a checkpoint a caller holds, is the head `headId` of that thread and stream:
 * then a store returns it as is from `getThreadHead` (a committed checkpoint never changes).
 */
export function sameHead(
  known: CheckpointRecord,
  headId: string | null | undefined,
  threadId: ThreadId,
  stream: StreamKey,
): boolean {
  return known.id === headId && known.threadId === threadId && known.stream === stream;
}

/**
 * A page of pending interrupts whose records are decoded when `items` is first read, not when the
 * page is read: a run result carries the oldest page of its thread's questions, and a caller
 * answering 1,000 of them one after another may never look. `rows` must not change afterwards
 * (pass copies of mutable rows, or their encoded text).
 */
export function lazyPendingPage<Row>(
  rows: readonly Row[],
  total: number,
  decode: (row: Row) => StoredInterrupt,
): PendingPage {
  let items: StoredInterrupt[] | undefined;
  return {
    get items(): StoredInterrupt[] {
      items ??= rows.map(decode);
      return items;
    },
    total,
  };
}

/**
 * At most this many of a run's pending interrupts come back with `LeaseReads.runId`; a caller
 * that gets this many reads the run's rows page by page instead.
 */
export const LEASE_READ_RUN_LIMIT = 1000;
