/**
 * Talking to the server safely: driver errors become typed {@link StoreUnavailableError}s, and a
 * client checked out of the pool can neither kill the process with an unheard `'error'` event nor
 * hide the first error behind a failed `ROLLBACK`.
 */
import { ReinError, StoreUnavailableError } from "@rein/core";

/** SQLSTATE classes and codes after which the same call may succeed later. */
const RETRYABLE_CLASSES = ["08", "53", "57", "58"] as const;
const RETRYABLE_CODES = new Set(["40001", "40P01", "55P03"]);
/** Node socket errors of a dropped or refused connection. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** Whether a driver error means "try again later" rather than "this call is wrong". */
export function isRetryable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as Error & { code?: unknown }).code;
  if (typeof code === "string") {
    if (NETWORK_CODES.has(code) || RETRYABLE_CODES.has(code)) return true;
    if (RETRYABLE_CLASSES.some((prefix) => code.startsWith(prefix))) return true;
  }
  // pg reports a connection that died mid-query without a code.
  return /Connection terminated|connection (is )?closed|timeout exceeded|Client has encountered a connection error/i.test(
    error.message,
  );
}

/**
 * The error a caller sees for a driver failure: Rein's own errors pass through, anything else is
 * wrapped in a {@link StoreUnavailableError} with the driver error as its `cause`.
 */
export function storeError(error: unknown): unknown {
  if (ReinError.is(error)) return error;
  const retryable = isRetryable(error);
  const code = error instanceof Error ? (error as Error & { code?: unknown }).code : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(
    retryable
      ? `PostgreSQL is unreachable or failed (${message}); nothing was changed by this call unless it reports otherwise. Retry it once the server answers.`
      : `PostgreSQL refused the operation (${message}).`,
    { cause: error, retryable, ...(typeof code === "string" ? { driverCode: code } : {}) },
  );
}

/** Runs `operation`, turning a driver failure into {@link storeError}'s typed error. */
export async function guarded<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw storeError(error);
  }
}
