/**
 * The audit log's hash chain: one chain per thread, each line hashed over its canonical content
 * and the previous line's hash, and the verifier every store runs (see `docs/audit.md`).
 *
 * One chain per thread, not per tenant: a thread's writes are already serialized by its lease, so
 * appending costs one lookup of the thread's own head and no tenant-wide lock; deleting a thread
 * removes its whole chain and leaves every other chain intact.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { InvalidInputError } from "../errors.ts";
import type { ThreadId } from "../ids.ts";
import type { Serializer } from "../serde.ts";
import type {
  AuditBreak,
  AuditBreakReason,
  AuditChainEntry,
  AuditChainQuery,
  AuditSeal,
  AuditVerification,
  AuditVerifyQuery,
} from "./types.ts";
import { decodeCursor, encodeCursor } from "./store-kit.ts";

/** The version tag that starts every hashed text; a new canonical form gets a new tag. */
export const AUDIT_CHAIN_VERSION = "rein.audit.v1";

/**
 * The hash of one audit line: SHA-256, hex, of the UTF-8 text
 * `rein.audit.v1\n<bytes of thread id>:<thread id>\n<n>\n<prevHash>\n<content>`, where `prevHash`
 * is the empty string for the first line. The thread id is length-prefixed (it may hold line
 * breaks); every other field before `content` has none. The Postgres store computes the same text
 * in SQL, so a line written by either is verified by this.
 */
export function auditEntryHash(
  threadId: string,
  n: number,
  prevHash: string,
  content: string,
): string {
  const text = `${AUDIT_CHAIN_VERSION}\n${Buffer.byteLength(threadId)}:${threadId}\n${n}\n${prevHash}\n${content}`;
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** The text a signed head's MAC covers: `rein.audit.seal.v1\n<bytes>:<thread>\n<n>\n<hash>`. */
export function auditSealText(seal: Pick<AuditSeal, "threadId" | "n" | "hash">): string {
  const { threadId, n, hash } = seal;
  return `rein.audit.seal.v1\n${Buffer.byteLength(threadId)}:${threadId}\n${n}\n${hash}`;
}

/** Signs the head `(n, hash)` of a thread's chain with `key` (HMAC-SHA-256, hex). */
export function signAuditSeal(
  key: string,
  head: Pick<AuditSeal, "threadId" | "n" | "hash">,
  sealedAt: string = new Date().toISOString(),
): AuditSeal {
  const mac = createHmac("sha256", key).update(auditSealText(head), "utf8").digest("hex");
  return { threadId: head.threadId, n: head.n, hash: head.hash, mac, sealedAt };
}

/** Whether `seal`'s MAC verifies with `key` (in constant time). */
export function auditSealValid(key: string, seal: AuditSeal): boolean {
  const expected = Buffer.from(signAuditSeal(key, seal).mac, "hex");
  const given = Buffer.from(seal.mac, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The record id in an audit line's stored content, or null when it does not decode. */
export function auditRecordId(serializer: Serializer, content: string): string | null {
  try {
    const record = serializer.deserialize(content);
    if (typeof record !== "object" || record === null) return null;
    const id: unknown = (record as { id?: unknown }).id;
    return typeof id === "string" ? id : null;
  } catch {
    return null;
  }
}

/** Keyset cursor of a chain page: the last line's thread and sequence. */
export function encodeChainCursor(line: Pick<AuditChainEntry, "threadId" | "seq">): string {
  return encodeCursor([line.threadId, String(line.seq)]);
}

/**
 * The thread and sequence a chain cursor holds, or null for none.
 *
 * @throws {InvalidInputError} for a cursor no store made.
 */
export function decodeChainCursor(cursor: string | null | undefined): [string, number] | null {
  const key = decodeCursor(cursor);
  if (key === null) return null;
  const seq = Number(key[1]);
  if (!Number.isSafeInteger(seq) || seq < 0) {
    throw new InvalidInputError(`Invalid cursor ${JSON.stringify(cursor)}.`, { cursor });
  }
  return [key[0], seq];
}

/** What a store gives {@link verifyAuditChains}: its chain pages and its signed heads. */
export interface AuditChainSource {
  /** As {@link AuditChainStore.listAuditChain}. */
  listAuditChain(
    query: AuditChainQuery,
  ): Promise<{ items: AuditChainEntry[]; nextCursor: string | null }>;
  /** The signed heads of the threads in scope (same filters as the chain pages). */
  listSeals(scope: Pick<AuditChainQuery, "threadId" | "tenant">): Promise<AuditSeal[]>;
  /** Stores signed heads, replacing each thread's previous one. */
  putSeals(seals: readonly AuditSeal[]): Promise<void>;
  /** The record id in a line's content, or null when it does not decode. */
  decodeId(content: string): string | null;
  /**
   * The sequence number of the newest line written before the chain began (0 for a store created
   * with the chain). Only lines up to it may be legacy: a later line without chain fields had
   * them erased, and erasing a whole thread's fields must not pass its lines off as legacy.
   */
  legacyUntil(): Promise<number>;
}

/** A chain's outcome: its first break, or its head. */
type ChainOutcome =
  | { broken: AuditBreak; checked: number; legacy: number }
  | {
      broken?: undefined;
      head: { n: number; hash: string } | null;
      checked: number;
      legacy: number;
    };

/**
 * Re-computes every chain in scope, thread by thread, and stops at the first break. With a key,
 * checks each chain against its signed head and, when everything verified, seals the heads that
 * moved. Memory is one thread's lines at a time.
 */
export async function verifyAuditChains(
  source: AuditChainSource,
  query: AuditVerifyQuery,
): Promise<AuditVerification> {
  const scope = { threadId: query.threadId, tenant: query.tenant };
  const key = query.key;
  const seals = new Map(
    (key === undefined ? [] : await source.listSeals(scope)).map((s) => [s.threadId, s]),
  );
  const result: AuditVerification = {
    ok: true,
    checked: 0,
    chains: 0,
    legacy: 0,
    signed: key === undefined ? null : { checked: 0, written: 0 },
  };
  const fresh: AuditSeal[] = [];
  const legacyUntil = await source.legacyUntil();
  const finish = (lines: AuditChainEntry[]): boolean => {
    const threadId = lines[0]?.threadId;
    if (threadId === undefined) return true;
    const outcome = checkChain(threadId, lines, source, legacyUntil);
    result.chains += 1;
    result.checked += outcome.checked;
    result.legacy += outcome.legacy;
    const broken =
      outcome.broken ?? checkSeal(key, seals.get(threadId), lines, outcome.head, result, fresh);
    seals.delete(threadId);
    if (broken) Object.assign(result, { ok: false, firstBroken: broken });
    return broken === undefined;
  };
  let lines: AuditChainEntry[] = [];
  let cursor: string | null = null;
  do {
    const page = await source.listAuditChain({ ...scope, limit: 1000, cursor });
    for (const line of page.items) {
      if (lines.length > 0 && lines[0]?.threadId !== line.threadId) {
        if (!finish(lines)) return result;
        lines = [];
      }
      lines.push(line);
    }
    cursor = page.nextCursor;
  } while (cursor !== null);
  if (!finish(lines)) return result;
  // A signed head whose thread has no line left: the whole chain was deleted under it.
  for (const seal of [...seals.values()].sort((a, b) => (a.threadId < b.threadId ? -1 : 1))) {
    if (result.signed) result.signed.checked += 1;
    const reason = key !== undefined && !auditSealValid(key, seal) ? "bad_signature" : "truncated";
    result.ok = false;
    result.firstBroken = breakAt(seal.threadId, seal.n, null, null, reason);
    return result;
  }
  if (key !== undefined && fresh.length > 0) {
    await source.putSeals(fresh);
    if (result.signed) result.signed.written = fresh.length;
  }
  return result;
}

/** Walks one thread's lines in append order and re-computes each link. */
function checkChain(
  threadId: ThreadId,
  lines: readonly AuditChainEntry[],
  source: AuditChainSource,
  legacyUntil: number,
): ChainOutcome {
  const positions = new Set(lines.map((line) => line.n));
  let expected = 1;
  let prev = "";
  let legacy = 0;
  let checked = 0;
  const fail = (
    line: AuditChainEntry,
    n: number | null,
    reason: AuditBreakReason,
  ): ChainOutcome => {
    const broken = breakAt(threadId, n, line.seq, source.decodeId(line.content), reason);
    return { broken, checked, legacy };
  };
  for (const line of lines) {
    if (line.n === null || line.hash === null) {
      // Lines from before the chain began come first, and were written before it began; any
      // other line without chain fields had them erased.
      if (expected > 1 || line.seq > legacyUntil) return fail(line, null, "unchained");
      legacy += 1;
      continue;
    }
    if (line.n !== expected) {
      const reordered = line.n < expected || positions.has(expected);
      return fail(line, reordered ? line.n : expected, reordered ? "out_of_order" : "missing");
    }
    if ((line.prevHash ?? "") !== prev) return fail(line, line.n, "broken_link");
    if (auditEntryHash(threadId, line.n, prev, line.content) !== line.hash) {
      return fail(line, line.n, "hash_mismatch");
    }
    prev = line.hash;
    expected += 1;
    checked += 1;
  }
  const head = expected > 1 ? { n: expected - 1, hash: prev } : null;
  return { head, checked, legacy };
}

/** Checks an intact chain against its signed head; queues a new seal when the head moved. */
function checkSeal(
  key: string | undefined,
  seal: AuditSeal | undefined,
  lines: readonly AuditChainEntry[],
  head: { n: number; hash: string } | null,
  result: AuditVerification,
  fresh: AuditSeal[],
): AuditBreak | undefined {
  if (key === undefined) return undefined;
  const threadId = lines[0]?.threadId as ThreadId;
  if (seal) {
    if (result.signed) result.signed.checked += 1;
    if (!auditSealValid(key, seal)) return breakAt(threadId, seal.n, null, null, "bad_signature");
    const at = lines.find((line) => line.n === seal.n);
    if (!at || head === null || head.n < seal.n) {
      return breakAt(threadId, seal.n, null, null, "truncated");
    }
    if (at.hash !== seal.hash) return breakAt(threadId, seal.n, at.seq, null, "seal_mismatch");
  }
  if (head && (!seal || seal.n !== head.n || seal.hash !== head.hash)) {
    fresh.push(signAuditSeal(key, { threadId, ...head }));
  }
  return undefined;
}

const MESSAGES: Record<AuditBreakReason, string> = {
  hash_mismatch: "its content or link fields changed after it was written",
  broken_link: "its previous-hash is not the hash of the entry before it",
  missing: "the entry at this position is missing (deleted)",
  out_of_order: "it is not where its position says (reordered, or a forged duplicate)",
  unchained: "it has no chain fields but comes after chained entries or after the chain began",
  truncated: "the signed head is past the chain's end: its newest entries were deleted",
  seal_mismatch: "the chain holds another entry where the signed head says it ends",
  bad_signature: "the signed head's MAC does not verify with this key",
};

/** A break with its sentence. */
function breakAt(
  threadId: ThreadId,
  n: number | null,
  seq: number | null,
  id: string | null,
  reason: AuditBreakReason,
): AuditBreak {
  const where = `thread ${JSON.stringify(threadId)}${n === null ? "" : `, entry ${n}`}`;
  const what = id === null ? "" : ` (audit record ${JSON.stringify(id)})`;
  return {
    threadId,
    n,
    seq,
    id,
    reason,
    message: `Audit chain broken at ${where}${what}: ${MESSAGES[reason]}.`,
  };
}
