/**
 * The HTTP edge of Rein's error vocabulary: the errors only the server raises, and the one table
 * that maps every error code to an HTTP status.
 */
import { ErrorCodes, ReinError, type ErrorCode } from "@rein/core";

/** No bearer token, or one that matches no configured token. */
export class UnauthorizedError extends ReinError {
  constructor(message = "Send `Authorization: Bearer <token>` with a token the server knows.") {
    super(ErrorCodes.UNAUTHORIZED, message);
  }
}

/** The token is valid but lacks the scope the route needs. */
export class ForbiddenError extends ReinError {
  constructor(scope: string, subject: string) {
    super(
      ErrorCodes.FORBIDDEN,
      `The token of ${subject} lacks the "${scope}" scope this route needs; use a token that has it.`,
      { scope },
    );
  }
}

/** The request body is larger than the server accepts. */
export class PayloadTooLargeError extends ReinError {
  constructor(limit: number) {
    super(
      ErrorCodes.PAYLOAD_TOO_LARGE,
      `The request body exceeds ${limit} bytes; send less (large documents belong in your own storage, referenced by id).`,
      { limit },
    );
  }
}

/** The request's headers are larger than the HTTP server accepts (Node's `maxHeaderSize`). */
export class HeadersTooLargeError extends ReinError {
  constructor(limit: number) {
    super(
      ErrorCodes.HEADERS_TOO_LARGE,
      `The request headers exceed ${limit} bytes; send a shorter token, fewer cookies or smaller headers.`,
      { limit },
    );
  }
}

/** The request did not arrive in full within the HTTP server's request timeout. */
export class RequestTimeoutError extends ReinError {
  constructor() {
    super(
      ErrorCodes.REQUEST_TIMEOUT,
      "The request did not arrive in full in time; send it again on a steady connection.",
    );
  }
}

/**
 * Code → HTTP status, for every code core defines (the mapped type makes a new core code a
 * compile error here until it is given a status) and for codes of newer cores this server may
 * meet. A code missing from the table is a bug and answers 500.
 */
export const statusByCode: { readonly [K in ErrorCode]: number } & Readonly<
  Record<string, number>
> = {
  invalid_graph: 500,
  invalid_update: 400,
  invalid_input: 400,
  invalid_ladder: 400,
  missing_capability: 501,
  invalid_id: 400,
  invalid_answer: 422,
  missing_checkpointer: 500,
  missing_thread_id: 400,
  non_serializable: 400,
  ambiguous_resume: 409,
  stale_target: 409,
  no_matching_target: 409,
  thread_interrupted: 409,
  checkpoint_conflict: 409,
  thread_busy: 409,
  fenced_out: 409,
  // The process shut down and handed the run over: it goes on elsewhere; rejoin to follow it.
  handed_over: 503,
  // Only ever the last event of a joined stream, never a response.
  events_missing: 503,
  run_in_progress: 409,
  not_found: 404,
  schema_version: 500,
  node_failed: 500,
  cancelled: 409,
  recursion_limit: 500,
  unauthorized: 401,
  // A bearer credential that is not accepted: the code says why, the message what to fix.
  token_invalid: 401,
  token_expired: 401,
  token_not_yet_valid: 401,
  token_audience: 401,
  token_issuer: 401,
  token_algorithm: 401,
  token_signature: 401,
  token_unknown_key: 401,
  token_claims: 401,
  key_revoked: 401,
  key_expired: 401,
  // The identity provider's metadata or keys could not be read: a fault upstream of this server.
  identity_unavailable: 503,
  forbidden: 403,
  not_allowed: 403,
  bulk_refused: 409,
  count_mismatch: 409,
  // Decision links need a signing key (REIN_LINK_SECRET or links.secret): the server has none.
  links_not_configured: 409,
  payload_too_large: 413,
  headers_too_large: 431,
  request_timeout: 408,
  store_unavailable: 503,
  idempotency_key_reused: 422,
  // The model provider failed or cut its answer short: a fault upstream of this server.
  model_failed: 502,
};

/** Decision links were asked for, and the server has no key to sign them with. */
export class LinksNotConfiguredError extends ReinError {
  constructor() {
    super(
      ErrorCodes.LINKS_NOT_CONFIGURED,
      "This server mints no decision links: start it with --notify FILE and a link secret (REIN_LINK_SECRET or links.secret, at least 32 characters).",
    );
  }
}

/** The JSON body of every error response. */
export interface ErrorBody {
  error: string;
  message: string;
  details: Record<string, unknown>;
}

/** Status and body for a Rein error. */
export function reinErrorResponse(error: ReinError): { status: number; body: ErrorBody } {
  return {
    status: statusByCode[error.code] ?? 500,
    body: { error: error.code, message: error.message, details: error.details },
  };
}

/** Codes whose responses say "try again later" (a `Retry-After` header is sent with them). */
export const retryableCodes: ReadonlySet<string> = new Set([
  "store_unavailable",
  "thread_busy",
  "fenced_out",
  "handed_over",
  "identity_unavailable",
]);
