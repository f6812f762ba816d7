/**
 * Driver failures of the SQLite store as typed errors: a locked or failing database file reaches
 * callers as a {@link StoreUnavailableError} (with the driver error as `cause`), never raw.
 */
import { ReinError, StoreUnavailableError } from "@rein/core";
import { settle as settleSync } from "@rein/core/store";
import { sqliteCode } from "./driver.ts";

/** SQLite result codes after which the same call may succeed later. */
const RETRYABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|PROTOCOL|CANTOPEN)$/;

/** The error a caller sees for a failure of the store: Rein's own errors pass through. */
export function storeError(error: unknown): unknown {
  if (ReinError.is(error)) return error;
  const code = sqliteCode(error);
  const retryable = code !== undefined && RETRYABLE.test(code);
  const message = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(
    retryable
      ? `The SQLite file is busy or failing (${message}); nothing was changed by this call. Retry it.`
      : `SQLite refused the operation (${message}).`,
    { cause: error, retryable, ...(code ? { driverCode: code } : {}) },
  );
}

/** Runs a synchronous store operation as a promise, with driver failures typed. */
export function settle<T>(operation: () => T): Promise<T> {
  return settleSync(operation).catch((error: unknown) => {
    throw storeError(error);
  });
}
