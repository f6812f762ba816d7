/**
 * Who calls: a bearer credential becomes a principal. Three kinds are accepted, tried in this
 * order: a token of the tokens file (each names a subject, a tenant and scopes; compared in
 * constant time, only SHA-256 digests kept after loading), an API key kept in the store
 * (`rein_...`), and a JWT of a configured OpenID issuer. No credential is ever logged.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { InvalidInputError, type ApprovalPrincipal } from "@rein/core";
import { z } from "zod";
import { ForbiddenError, UnauthorizedError } from "./errors.ts";
import { looksLikeJwt, OidcVerifier, type OidcIssuerConfig } from "./identity/oidc.ts";
import type { Principal, Scope } from "./identity/principal.ts";
import { isApiKey, type ApiKeyVerifier } from "./identity/api-keys.ts";

export type { Principal, Scope } from "./identity/principal.ts";

const TokenSchema = z
  .object({
    token: z.string().min(16, "tokens must be at least 16 characters"),
    subject: z.string().min(1).max(256),
    tenant: z.string().min(1).max(256),
    scopes: z.array(z.enum(["read", "run", "resume", "admin", "metrics"])).min(1),
    groups: z.array(z.string().min(1).max(256)).optional(),
    roles: z.array(z.string().min(1).max(256)).optional(),
  })
  .strict();

const TokenFileSchema = z.union([
  z.object({ tokens: z.array(TokenSchema).min(1) }).strict(),
  z.array(TokenSchema).min(1),
]);

/** A token as configured. */
export type TokenConfig = z.infer<typeof TokenSchema>;

/**
 * How the server authenticates: with credentials (tokens of the file, OpenID issuers; API keys
 * come from the store), or open (local use, loopback only).
 */
export type AuthConfig =
  | {
      mode: "tokens";
      entries: { digest: Buffer; principal: Principal }[];
      /** The OpenID issuers whose JWTs are accepted, or null. */
      oidc?: OidcVerifier | null;
    }
  | { mode: "open"; principal: Principal };

const digest = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest();

/**
 * Auth from token entries and, optionally, OpenID issuers whose JWTs are accepted too (see
 * docs/identity.md). Either may be empty: API keys kept in the store work with any of them.
 */
export function tokenAuth(
  tokens: readonly TokenConfig[],
  issuers: readonly OidcIssuerConfig[] = [],
): AuthConfig {
  return {
    mode: "tokens",
    oidc: issuers.length > 0 ? new OidcVerifier(issuers) : null,
    entries: tokens.map((t) => ({
      digest: digest(t.token),
      principal: {
        subject: t.subject,
        tenant: t.tenant,
        scopes: new Set(t.scopes),
        groups: t.groups ?? [],
        roles: t.roles ?? [],
      },
    })),
  };
}

/** Open mode: every request acts as `local`, with every scope, across all tenants. */
export function openAuth(subject = "local"): AuthConfig {
  return {
    mode: "open",
    principal: { subject, tenant: null, scopes: new Set<Scope>(["admin"]), groups: [], roles: [] },
  };
}

/**
 * Parses tokens from JSON text: `{ "tokens": [{ token, subject, tenant, scopes, groups?, roles? }] }`
 * or the bare array.
 *
 * @throws InvalidInputError naming what is wrong (never echoing a token).
 */
export function parseTokens(text: string, source: string): TokenConfig[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new InvalidInputError(`${source} is not valid JSON.`, { source });
  }
  const parsed = TokenFileSchema.safeParse(raw);
  if (!parsed.success)
    throw new InvalidInputError(
      `${source} must hold { "tokens": [{ "token", "subject", "tenant", "scopes" }] }: ${parsed.error.issues
        .map((i) => `${i.path.join(".")}: ${i.message}`)
        .join("; ")}`,
      { source },
    );
  return Array.isArray(parsed.data) ? parsed.data : parsed.data.tokens;
}

/** Tokens from a file, or from the `REIN_TOKENS` environment variable (same JSON). */
export function loadTokens(options: {
  file?: string;
  env?: NodeJS.ProcessEnv;
}): TokenConfig[] | null {
  if (options.file) return parseTokens(readFileSync(options.file, "utf8"), options.file);
  const fromEnv = (options.env ?? process.env)["REIN_TOKENS"];
  return fromEnv ? parseTokens(fromEnv, "REIN_TOKENS") : null;
}

/**
 * The principal of an `Authorization` header. Every token of the file is compared (no early
 * exit), each in constant time, so timing tells nothing about which or how much matched; then an
 * API key (`rein_...`) is looked up in the store, and a JWT verified against its issuer.
 *
 * @throws UnauthorizedError when the header is missing or matches nothing; CredentialError (401,
 *   a `token_*` or `key_*` code) for a JWT or key that is refused, saying why.
 */
export async function authenticate(
  auth: AuthConfig,
  header: string | undefined,
  keys: ApiKeyVerifier | null = null,
): Promise<Principal> {
  if (auth.mode === "open") return auth.principal;
  const match = /^Bearer ([^\s]{1,8192})$/.exec(header ?? "");
  if (!match?.[1]) throw new UnauthorizedError();
  const credential = match[1];
  const candidate = digest(credential);
  let found: Principal | null = null;
  for (const entry of auth.entries) {
    if (timingSafeEqual(entry.digest, candidate)) found = entry.principal;
  }
  if (found) return found;
  if (keys && isApiKey(credential)) return keys.verify(credential);
  if (auth.oidc && looksLikeJwt(credential)) return auth.oidc.verify(credential);
  throw new UnauthorizedError(
    auth.oidc
      ? "The bearer token is not valid: send a token of the tokens file, an API key, or an access token of the configured issuer."
      : "The bearer token is not valid.",
  );
}

/** What an approval policy sees of the caller: its subject, groups and roles. */
export function answerPrincipal(principal: Principal): ApprovalPrincipal {
  return { subject: principal.subject, groups: principal.groups, roles: principal.roles };
}

/** @throws ForbiddenError when the principal lacks `scope` (and `admin`, for any but `metrics`). */
export function requireScope(principal: Principal, scope: Scope): void {
  if (!principal.scopes.has(scope) && (scope === "metrics" || !principal.scopes.has("admin")))
    throw new ForbiddenError(scope, principal.subject);
}
