/**
 * Driver failures of the SQLite store as typed errors: a locked or failing database file reaches
 * callers as a {@link StoreUnavailableError} (with the driver error as `cause`), never raw.
 */
import { ReinError, StoreUnavailableError } from "@rein/core";
import { settle as settleSync } from "@rein/core/store";
import type { DatabaseSync } from "node:sqlite";
import { openDatabase, sqliteCode } from "./driver.ts";

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

/** SQLite result codes of a file that is not a database, or a damaged one. */
const UNSOUND = /^SQLITE_(NOTADB|CORRUPT)$/;

/**
 * The error a caller sees when the file at `path` cannot be opened as a store. A file that is not
 * SQLite, or a damaged (truncated) one, will not open on retry: the message says what to do.
 */
export function openError(path: string, error: unknown): unknown {
  const code = sqliteCode(error);
  if (code === undefined || !UNSOUND.test(code)) return storeError(error);
  const message = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(
    `The SQLite file ${path} is not a Rein store or is damaged (${message}); nothing was changed. Restore it from a backup, or open another path (to start afresh, move the file and its -wal and -shm files aside).`,
    { cause: error, retryable: false, driverCode: code },
  );
}

/** Opens the store's file, a failure typed as {@link openError} says. */
export function openStoreFile(path: string): DatabaseSync {
  try {
    return openDatabase(path);
  } catch (error) {
    throw openError(path, error);
  }
}

/** Runs a synchronous store operation as a promise, with driver failures typed. */
export function settle<T>(operation: () => T): Promise<T> {
  return settleSync(operation).catch((error: unknown) => {
    throw storeError(error);
  });
}
