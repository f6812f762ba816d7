/**
 * Reading a verified token's claims into a principal, by configuration: which claim is the
 * subject, where the tenant, groups and roles are, and which scopes the token grants.
 */
import { isScope, type Principal, type Scope } from "./principal.ts";

/**
 * Where a claim is: a top-level claim name tried as written first (namespaced claims such as
 * `https://example.com/roles` hold dots), else a dot path (`realm_access.roles`); or the path's
 * keys as a list.
 */
export type ClaimPath = string | readonly string[];

/** How one issuer's claims become a principal. */
export interface ClaimMapping {
  /** The issuer, recorded with the subject. */
  issuer: string;
  /** The subject claim. Default `sub`. */
  subject?: ClaimPath | undefined;
  /** The tenant claim; or {@link ClaimMapping.fixedTenant}. */
  tenant?: ClaimPath | undefined;
  /** Every token of the issuer acts for this tenant. */
  fixedTenant?: string | undefined;
  /** The groups claim (a list, or one string). Default none. */
  groups?: ClaimPath | undefined;
  /** The roles claim (a list, or one string). Default none. */
  roles?: ClaimPath | undefined;
  /** The scopes claim (a space-separated string or a list). Default `scope`, then `scp`. */
  scopes?: ClaimPath | undefined;
  /** Token scopes are read after this prefix (`rein:` reads `rein:resume` as `resume`). Default none. */
  scopePrefix?: string | undefined;
  /** Scopes granted by a role or group the token carries. */
  roleScopes?: Readonly<Record<string, readonly Scope[]>> | undefined;
  /** Scopes every token of the issuer has. Default none. */
  defaultScopes?: readonly Scope[] | undefined;
}

/** A claim the mapping needs is missing or of the wrong type: what to fix at the provider. */
export class ClaimError extends Error {}

/** The value at `path` in `claims`, or undefined. */
export function readClaim(claims: Record<string, unknown>, path: ClaimPath): unknown {
  if (typeof path === "string" && Object.hasOwn(claims, path)) return claims[path];
  const keys = typeof path === "string" ? path.split(".") : path;
  let at: unknown = claims;
  for (const key of keys) {
    if (typeof at !== "object" || at === null || Array.isArray(at) || !Object.hasOwn(at, key))
      return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

const label = (path: ClaimPath): string => (typeof path === "string" ? path : path.join("."));

/** A list of strings from a claim: a list, a space-separated string when `split`, or one string. */
function strings(value: unknown, path: ClaimPath, split: boolean): string[] {
  if (value === undefined || value === null) return [];
  if (typeof value === "string") return split ? value.split(/\s+/).filter(Boolean) : [value];
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value;
  throw new ClaimError(
    `The token's ${label(path)} claim must be a string or a list of strings; fix the claim at the provider or point the mapping at another claim.`,
  );
}

function requiredString(claims: Record<string, unknown>, path: ClaimPath, what: string): string {
  const value = readClaim(claims, path);
  if (typeof value === "string" && value.length > 0 && value.length <= 256) return value;
  throw new ClaimError(
    `The token has no ${label(path)} claim (its ${what}) as a string of 1 to 256 characters; have the provider add it or map another claim.`,
  );
}

/** The principal of verified claims, by `mapping`. @throws ClaimError naming the claim to fix. */
export function principalOf(claims: Record<string, unknown>, mapping: ClaimMapping): Principal {
  const subject = requiredString(claims, mapping.subject ?? "sub", "subject");
  const tenant =
    mapping.fixedTenant ?? requiredString(claims, mapping.tenant ?? "tenant", "tenant");
  const groups = mapping.groups
    ? strings(readClaim(claims, mapping.groups), mapping.groups, false)
    : [];
  const roles = mapping.roles
    ? strings(readClaim(claims, mapping.roles), mapping.roles, false)
    : [];
  const granted = mapping.scopes
    ? strings(readClaim(claims, mapping.scopes), mapping.scopes, true)
    : [
        ...strings(readClaim(claims, "scope"), "scope", true),
        ...strings(readClaim(claims, "scp"), "scp", true),
      ];
  const prefix = mapping.scopePrefix ?? "";
  const scopes = new Set<Scope>(mapping.defaultScopes ?? []);
  for (const each of granted) {
    const name = each.startsWith(prefix) ? each.slice(prefix.length) : null;
    if (name !== null && isScope(name)) scopes.add(name);
  }
  for (const name of [...roles, ...groups])
    for (const scope of mapping.roleScopes?.[name] ?? []) scopes.add(scope);
  return {
    subject: `${mapping.issuer}#${subject}`,
    tenant,
    scopes,
    groups,
    roles,
    issuer: mapping.issuer,
  };
}
