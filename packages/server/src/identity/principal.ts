/**
 * The caller of a request, whichever credential made it: a token of the tokens file, an API key
 * kept in the store, or a JWT of a configured OpenID issuer.
 */

/**
 * What a caller may do. `admin` implies every other scope but `metrics` (scraping `/metrics`,
 * which counts every tenant's approvals).
 */
export type Scope = "read" | "run" | "resume" | "admin" | "metrics";

/** Every scope, in the order the API lists them. */
export const SCOPES: readonly Scope[] = ["read", "run", "resume", "admin", "metrics"];

/** Whether `value` names a scope. */
export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** The caller of a request. */
export interface Principal {
  /**
   * Recorded as the actor of answers, steering and audit lines, and matched by approval
   * policies. For a JWT it is `<issuer>#<subject claim>` (an issuer URL has no fragment, so the
   * two parts never blur); for an API key `key:<prefix>`.
   */
  subject: string;
  /** The tenant whose threads the caller sees; `null` in open mode (sees every thread). */
  tenant: string | null;
  scopes: ReadonlySet<Scope>;
  /** Groups the caller carries (approval policies list who may answer by group). */
  groups: readonly string[];
  /** Roles the caller carries (approval policies list who may answer by role). */
  roles: readonly string[];
  /** The OpenID issuer whose token made this principal; absent for tokens-file tokens and keys. */
  issuer?: string;
}
