/**
 * Talking to the server safely: driver errors become typed {@link StoreUnavailableError}s, text
 * that PostgreSQL cannot hold is refused before it is sent, and a client checked out of the pool
 * can neither kill the process with an unheard `'error'` event nor hide the first error behind a
 * failed `ROLLBACK`.
 */
import { InvalidInputError, ReinError, StoreUnavailableError } from "@rein/core";
import type { Named } from "./fragments.ts";

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

/** The text of a parameter (or of an array, as `unnest` takes) that holds a NUL character. */
function nulText(value: unknown): string | undefined {
  if (typeof value === "string") return value.includes("\u0000") ? value : undefined;
  if (!Array.isArray(value)) return undefined;
  for (const item of value) {
    const found = nulText(item);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * A statement with its values, checked before it is sent: PostgreSQL text cannot hold NUL
 * (U+0000) and answers it with an encoding error, which would reach the caller as an outage.
 * A caller's value with one (a filter, a name, an actor) is bad input, refused here the same
 * way for every statement; nothing is sent.
 *
 * @throws InvalidInputError naming the statement, the parameter and the start of its value.
 */
export function checked(statement: Named, values: unknown[]): Named & { values: unknown[] } {
  for (let at = 0; at < values.length; at++) {
    const found = nulText(values[at]);
    if (found === undefined) continue;
    const name = statement.name.replace(/^rein_[0-9a-f]{10}_/, "");
    throw new InvalidInputError(
      `A text value holds a NUL character (U+0000), which PostgreSQL cannot store or compare: parameter $${at + 1} of ${name} (${JSON.stringify(found.slice(0, 60))}). Remove the NUL character; nothing was sent.`,
      { statement: name, parameter: at + 1, reason: "nul_character" },
    );
  }
  return { ...statement, values };
}
