/**
 * Store-neutral helpers of the Postgres saver's list and read methods: page sizes, opaque
 * keyset cursors and the rebuilding of delta chains.
 */
import { InvalidInputError } from "@rein/core";

const DEFAULT_PAGE = 50;
const MAX_PAGE = 1000;

/** A page size within bounds: 50 by default, at most 1000. */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return DEFAULT_PAGE;
  return Math.max(1, Math.min(MAX_PAGE, Math.floor(limit)));
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
    if (Array.isArray(key) && key.length === 2 && key.every((k) => typeof k === "string")) {
      return key as [string, string];
    }
  } catch {
    // Fall through to the error below.
  }
  throw new InvalidInputError(`Invalid cursor ${JSON.stringify(cursor)}.`, { cursor });
}

/** A sequence cursor (audit log): the last sequence number seen. */
export function decodeSeqCursor(cursor: string | null | undefined): number {
  if (!cursor) return 0;
  const seq = Number(cursor);
  if (!Number.isSafeInteger(seq) || seq < 0) {
    throw new InvalidInputError(`Invalid cursor ${JSON.stringify(cursor)}.`, { cursor });
  }
  return seq;
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
