/**
 * Bearer tokens: each names a subject (the actor in the audit log), a tenant (the only threads it
 * sees) and scopes. Tokens are compared in constant time and never logged; only their SHA-256
 * digests are kept in memory after loading.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { InvalidInputError, type ApprovalPrincipal } from "@rein/core";
import { z } from "zod";
import { ForbiddenError, UnauthorizedError } from "./errors.ts";

/**
 * What a token may do. `admin` implies every other scope but `metrics` (scraping `/metrics`,
 * which counts every tenant's approvals).
 */
export type Scope = "read" | "run" | "resume" | "admin" | "metrics";

/** The caller of a request. */
export interface Principal {
  /** Recorded as the actor of answers, steering and audit lines. */
  subject: string;
  /** The tenant whose threads the caller sees; `null` in open mode (sees every thread). */
  tenant: string | null;
  scopes: ReadonlySet<Scope>;
  /** Groups the token carries (approval policies list who may answer by group). */
  groups: readonly string[];
  /** Roles the token carries (approval policies list who may answer by role). */
  roles: readonly string[];
}

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

/** How the server authenticates: with tokens, or open (local use, loopback only). */
export type AuthConfig =
  | { mode: "tokens"; entries: { digest: Buffer; principal: Principal }[] }
  | { mode: "open"; principal: Principal };

const digest = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest();

/** Auth from token entries. */
export function tokenAuth(tokens: readonly TokenConfig[]): AuthConfig {
  return {
    mode: "tokens",
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
 * The principal of an `Authorization` header. Every configured token is compared (no early exit),
 * each in constant time, so timing tells nothing about which or how much matched.
 *
 * @throws UnauthorizedError when the header is missing or matches no token.
 */
export function authenticate(auth: AuthConfig, header: string | undefined): Principal {
  if (auth.mode === "open") return auth.principal;
  const match = /^Bearer ([^\s]{1,4096})$/.exec(header ?? "");
  if (!match?.[1]) throw new UnauthorizedError();
  const candidate = digest(match[1]);
  let found: Principal | null = null;
  for (const entry of auth.entries) {
    if (timingSafeEqual(entry.digest, candidate)) found = entry.principal;
  }
  if (!found) throw new UnauthorizedError("The bearer token is not valid.");
  return found;
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
