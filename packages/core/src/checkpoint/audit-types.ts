/**
 * The audit trail's query and verification shapes, as the `auditChain` capability
 * (`AuditChainStore` in types.ts) reads and checks them.
 */
import type { ThreadId } from "../ids.ts";

/** Filter of `AuditChainStore.listAudit`. Oldest first. */
export interface AuditQuery {
  threadId?: ThreadId;
  tenant?: string | null;
  limit?: number;
  cursor?: string | null;
}

/** Scope and page of `AuditChainStore.listAuditChain`: thread order, then append order. */
export interface AuditChainQuery {
  threadId?: ThreadId;
  /** The tenant of the lines' thread (`null`: threads without a tenant). */
  tenant?: string | null;
  limit?: number;
  cursor?: string | null;
}

/**
 * One audit line as stored, with its link in its thread's hash chain (see `docs/audit.md`).
 *
 * `hash` is `auditEntryHash` of the thread, `n`, `prevHash` and `content`; `prevHash` is
 * the hash of the line at `n - 1`. Lines written before the chain began have neither.
 */
export interface AuditChainEntry {
  /** Insertion sequence (the order of `AuditChainStore.listAudit`). */
  seq: number;
  threadId: ThreadId;
  /** Position in the thread's chain, from 1; `null` for a line written before the chain began. */
  n: number | null;
  /** The previous line's hash; `null` for the first line of a chain (and unchained lines). */
  prevHash: string | null;
  /** SHA-256 (hex) of the line's canonical content and `prevHash`; `null` when unchained. */
  hash: string | null;
  /** The stored text of the record, exactly as hashed (the store's serializer's encoding). */
  content: string;
}

/** What `AuditChainStore.verifyAudit` checks: the chains of one thread or of one tenant's threads. */
export interface AuditVerifyQuery {
  threadId?: ThreadId;
  tenant?: string | null;
  /**
   * The HMAC key of signed heads. Given, the seal of every chain checked is verified (a tail
   * deleted since is `truncated`), and each intact chain's head is sealed anew.
   */
  key?: string;
}

/** Why a chain does not verify. */
export type AuditBreakReason =
  /** The line's content or link fields were changed after it was written. */
  | "hash_mismatch"
  /** `prevHash` is not the hash of the line before it. */
  | "broken_link"
  /** Lines are missing before this one (deleted). */
  | "missing"
  /** The line is not where its position says (reordered, or a forged duplicate position). */
  | "out_of_order"
  /** A line without chain fields after chained lines (forged, or its fields erased). */
  | "unchained"
  /** The signed head is past the chain's end: its newest lines were deleted. */
  | "truncated"
  /** The chain has another line where the signed head says it has the signed one. */
  | "seal_mismatch"
  /** The signed head's MAC does not verify with the key (forged, or another key). */
  | "bad_signature";

/** The first place a chain breaks, as {@link AuditVerification.firstBroken} names it. */
export interface AuditBreak {
  threadId: ThreadId;
  /** The chain position concerned (the missing one, for `missing` and `truncated`). */
  n: number | null;
  /** The stored line found there (its insertion sequence), when there is one. */
  seq: number | null;
  /** The audit record's id, when its content still decodes. */
  id: string | null;
  reason: AuditBreakReason;
  /** One sentence for a person. */
  message: string;
}

/** The result of `AuditChainStore.verifyAudit`. */
export interface AuditVerification {
  /** True when every chain checked verifies (and, with a key, every signed head). */
  ok: boolean;
  /** Chained lines whose hash and link were re-computed and found intact. */
  checked: number;
  /** Threads (chains) checked. */
  chains: number;
  /** Lines written before the chain began (before the migration that added it): not covered. */
  legacy: number;
  /** The first break, in thread order; absent when `ok`. */
  firstBroken?: AuditBreak;
  /**
   * Signed heads, when a key was given: how many were checked against their chains, and how many
   * were written (the heads of intact chains that moved). `null` without a key.
   */
  signed: { checked: number; written: number } | null;
}

/** A signed head: the newest position and hash of one thread's chain, with its HMAC. */
export interface AuditSeal {
  threadId: ThreadId;
  n: number;
  hash: string;
  /** HMAC-SHA-256 (hex) of `auditSealText`, with the server's key. */
  mac: string;
  sealedAt: string;
}
