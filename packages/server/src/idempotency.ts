/**
 * `Idempotency-Key` at the HTTP edge: the core request id a key stands for, and the claim that
 * ties the key to the one request it was first sent with. A repeat of that request gets its
 * original outcome; the same key with another request is refused (422), because replaying the
 * first outcome would tell the caller that its second request was applied when nothing was.
 */
import { createHash, randomUUID } from "node:crypto";
import {
  encodeHttpRequestId,
  IdempotencyKeyReusedError,
  InvalidInputError,
  type ThreadId,
} from "@rein/core";
import type { ThreadCatalogStore } from "@rein/core/store";
import type { Principal } from "./auth.ts";
import {
  readSlot,
  SIDE_KINDS,
  writeSlot,
  type SlotStore,
  type ThreadSlot,
} from "./side-records.ts";

/** Idempotency keys: printable ASCII, at most 200 characters. */
const KEY = /^[\x21-\x7e]{1,200}$/;

/**
 * Where a claim is kept: a side record of the thread (first write wins on every store, and it
 * leaves with the thread) under `tenant`. A request's claim and outcome are its tenant's; a
 * thread id's claim has none, because thread ids are unique across tenants.
 */
function claimSlot(tenant: string | null, threadId: string, key: string): ThreadSlot {
  return { tenant, kind: SIDE_KINDS.idempotency, threadId, key };
}

/** One request, as the key was first used with: its route and body, and who claimed it. */
export interface RequestClaim {
  /** The core request id (`http:<tenant>:<thread>:<key>`). */
  requestId: string;
  /** The tenant of the request (its claim and outcome are kept under it). */
  tenant: string | null;
  /**
   * `true` when this request made the claim; `false` when the same request was claimed before
   * (a retry, or an identical request racing this one): its outcome is the first one's.
   */
  first: boolean;
}

/**
 * The core request id of an `Idempotency-Key`: scoped by tenant and thread, so one tenant's key
 * can never return another tenant's outcome.
 *
 * @throws InvalidInputError for a key that is not 1–200 printable ASCII characters.
 */
export function requestIdOf(
  header: string | string[] | undefined,
  principal: Principal,
  threadId: string,
): string | undefined {
  const key = keyOf(header);
  return key === undefined
    ? undefined
    : encodeHttpRequestId({ tenant: principal.tenant, threadId, key });
}

function keyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined || !KEY.test(key))
    throw new InvalidInputError("Idempotency-Key must be 1-200 printable ASCII characters.");
  return key;
}

/** Digest of a request: its route and its body as parsed (keys in the order sent). */
export function requestDigest(route: string, body: unknown): string {
  return createHash("sha256")
    .update(route)
    .update("\n")
    .update(JSON.stringify(body ?? null))
    .digest("base64url");
}

/**
 * Ties an `Idempotency-Key` to this request, atomically in the store (first claim wins, on every
 * store): `undefined` without a key.
 *
 * @throws IdempotencyKeyReusedError when the key was first used with another route or body;
 *   nothing is stored.
 * @throws InvalidInputError for a malformed key.
 */
export async function claimRequest(
  store: SlotStore,
  principal: Principal,
  threadId: string,
  header: string | string[] | undefined,
  route: string,
  body: unknown,
): Promise<RequestClaim | undefined> {
  const requestId = requestIdOf(header, principal, threadId);
  if (requestId === undefined) return undefined;
  const digest = requestDigest(route, body);
  const mine = `${digest}:${randomUUID()}`;
  const stored = await writeSlot(store, claimSlot(principal.tenant, threadId, requestId), mine);
  const claimed = typeof stored.value === "string" ? stored.value : "";
  if (claimed.slice(0, claimed.lastIndexOf(":")) !== digest)
    throw new IdempotencyKeyReusedError(keyOf(header) ?? "");
  return { requestId, tenant: principal.tenant, first: claimed === mine };
}

/**
 * How old a thread id's claim must be, with still no thread row, to count as abandoned (its
 * request died between the claim and the row: the two are written one round trip apart).
 */
export const THREAD_CLAIM_STALE_MS = 10_000;

/** A thread id's claim as stored: who claimed it and when (a bare string: by an older version). */
type StoredThreadClaim = { by: string; at: number } | string;

/** The once key of a thread id's claim: the first, or the one taking over an abandoned claim. */
function threadClaimKey(after: string | null): string {
  return after === null ? "thread:create" : `thread:create:after:${after}`;
}

/**
 * Claims a thread id for the request creating it, atomically in the store (first claim wins, on
 * every store): two creates of one id that race past the existence check cannot both write it,
 * so neither can overwrite the other's tenant or metadata. The claim leaves with the thread, so
 * a deleted id can be created again. A keyed request claims with its request id, so its retry
 * wins again after a crash between the claim and the write.
 *
 * A claim is recoverable: one older than {@link THREAD_CLAIM_STALE_MS} whose thread row was never
 * written belongs to a request that died in between, and the next create takes it over — once,
 * through a claim keyed by the abandoned one, so two creates racing for the same abandoned id
 * still have one winner. A crash at any point leaves the id free (soon) or a working thread,
 * never taken by nothing.
 *
 * @returns the claim this request won (pass it to {@link threadClaimLive} before writing the
 *   row), or null when the id is taken.
 */
export async function claimThreadId(
  store: SlotStore & ThreadCatalogStore,
  threadId: ThreadId,
  claim: RequestClaim | undefined,
): Promise<string | null> {
  const mine = claim?.requestId ?? randomUUID();
  let after: string | null = null;
  for (let generation = 0; generation < 8; generation++) {
    const value: StoredThreadClaim = { by: mine, at: Date.now() };
    const stored = (await writeSlot(store, claimSlot(null, threadId, threadClaimKey(after)), value))
      .value as StoredThreadClaim;
    const by = typeof stored === "string" ? stored : stored.by;
    if (by === mine) return mine;
    // Somebody else's claim: in flight, fulfilled, or abandoned.
    const at = typeof stored === "string" ? 0 : stored.at;
    if (Date.now() - at < THREAD_CLAIM_STALE_MS) return null;
    if (await store.getThread(threadId)) return null;
    after = by;
  }
  return null;
}

/**
 * Whether a claim this request won is still its own: nobody took it over as abandoned (a request
 * paused between its claim and its row for longer than {@link THREAD_CLAIM_STALE_MS}).
 */
export async function threadClaimLive(
  store: SlotStore,
  threadId: ThreadId,
  mine: string,
): Promise<boolean> {
  return (await readSlot(store, claimSlot(null, threadId, threadClaimKey(mine)))) === undefined;
}

/** The side-record key of a claimed request's stored outcome. */
function outcomeKey(requestId: string): string {
  return `${requestId}#outcome`;
}

/**
 * Applies a claimed request once, for a route whose outcome is a record rather than a run (the
 * run routes keep theirs in the run and its request result): the first claim applies and stores
 * the outcome beside the claim; a repeat returns it. A repeat that finds none waits up to 2 s
 * for the first attempt (it may still be applying); if none comes, the first attempt failed
 * before applying anything, and the repeat applies.
 */
export async function applyOnce<T>(
  store: SlotStore,
  threadId: string,
  claim: RequestClaim | undefined,
  apply: () => Promise<T>,
): Promise<T> {
  if (!claim) return apply();
  const slot = claimSlot(claim.tenant, threadId, outcomeKey(claim.requestId));
  if (!claim.first) {
    const deadline = Date.now() + 2_000;
    for (;;) {
      const stored = await readSlot(store, slot);
      if (stored) return stored.value as T;
      if (Date.now() >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  const outcome = await apply();
  return (await writeSlot(store, slot, outcome)).value as T;
}
