/** The `_meta` keys Rein's MCP client and server agree on. */

/** The `_meta` key under which each call carries its idempotency key to the server. */
export const IDEMPOTENCY_META_KEY = "rein.dev/idempotency-key";
