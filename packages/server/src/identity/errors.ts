/**
 * Refusals of a bearer credential: each a 401 with a stable code saying why, and a message saying
 * what to fix. None carries any part of the credential.
 */
import { ErrorCodes, ReinError, type ErrorCode } from "@rein/core";

/** A bearer credential the server does not accept (401). */
export class CredentialError extends ReinError {
  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(code, message, details);
  }
}

/** The issuer's metadata or keys could not be read (503): a fault upstream, try again. */
export class IdentityUnavailableError extends ReinError {
  constructor(issuer: string, why: string) {
    super(
      ErrorCodes.IDENTITY_UNAVAILABLE,
      `The server could not read the keys of ${issuer} (${why}); try again shortly.`,
      { issuer },
    );
  }
}
