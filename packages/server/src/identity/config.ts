/**
 * The identity configuration of a server: OpenID issuers from `--identity FILE` (see
 * docs/identity.md) or from the `--oidc-*` flags.
 */
import { readFileSync } from "node:fs";
import { InvalidInputError } from "@rein/core";
import { z } from "zod";
import { PUBLIC_KEY_ALGORITHMS, type OidcIssuerConfig } from "./oidc.ts";
import { SCOPES, type Scope } from "./principal.ts";

const ScopeSchema = z.enum(SCOPES as [Scope, ...Scope[]]);
const PathSchema = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);
const Algorithm = z.enum(PUBLIC_KEY_ALGORITHMS, {
  error: `algorithms are public-key ones only (${PUBLIC_KEY_ALGORITHMS.join(", ")}); "none" and HS* are never accepted`,
});
const IssuerUrl = z
  .string()
  .url()
  .refine(
    (url) => !url.includes("#") && !url.includes("?"),
    "an issuer URL has no query or fragment",
  );

const IssuerSchema = z
  .object({
    issuer: IssuerUrl,
    audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
    clientId: z.string().min(1).optional(),
    consoleScopes: z.array(z.string().min(1)).optional(),
    jwksUri: z.string().url().optional(),
    algorithms: z.array(Algorithm).min(1).optional(),
    leewaySeconds: z.number().int().min(0).max(300).optional(),
    jwksCooldownSeconds: z.number().min(0).max(3600).optional(),
    tenant: z.string().min(1).max(256).optional(),
    claims: z
      .object({
        subject: PathSchema.optional(),
        tenant: PathSchema.optional(),
        groups: PathSchema.optional(),
        roles: PathSchema.optional(),
        scopes: PathSchema.optional(),
      })
      .strict()
      .optional(),
    scopePrefix: z.string().optional(),
    roleScopes: z.record(z.string(), z.array(ScopeSchema)).optional(),
    defaultScopes: z.array(ScopeSchema).optional(),
  })
  .strict()
  .refine((c) => (c.tenant === undefined) !== (c.claims?.tenant === undefined), {
    message: 'give each issuer either "tenant" (fixed) or "claims.tenant" (a claim path), not both',
  });

const IdentityFileSchema = z.object({ issuers: z.array(IssuerSchema).min(1) }).strict();

type IssuerInput = z.infer<typeof IssuerSchema>;

function toConfig(input: IssuerInput): OidcIssuerConfig {
  return {
    issuer: input.issuer,
    audience: typeof input.audience === "string" ? [input.audience] : input.audience,
    clientId: input.clientId,
    consoleScopes: input.consoleScopes,
    jwksUri: input.jwksUri,
    algorithms: input.algorithms,
    leewaySeconds: input.leewaySeconds,
    jwksCooldownSeconds: input.jwksCooldownSeconds,
    fixedTenant: input.tenant,
    subject: input.claims?.subject,
    tenant: input.claims?.tenant,
    groups: input.claims?.groups,
    roles: input.claims?.roles,
    scopes: input.claims?.scopes,
    scopePrefix: input.scopePrefix,
    roleScopes: input.roleScopes,
    defaultScopes: input.defaultScopes,
  };
}

function issues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`).join("; ");
}

/**
 * Issuers from JSON text: `{ "issuers": [{ issuer, audience, tenant | claims.tenant, ... }] }`.
 *
 * @throws InvalidInputError naming what is wrong.
 */
export function parseIdentity(text: string, source: string): OidcIssuerConfig[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new InvalidInputError(`${source} is not valid JSON.`, { source });
  }
  const parsed = IdentityFileSchema.safeParse(raw);
  if (!parsed.success)
    throw new InvalidInputError(`${source} is not a valid identity file: ${issues(parsed.error)}`, {
      source,
    });
  const seen = new Set<string>();
  for (const each of parsed.data.issuers) {
    if (seen.has(each.issuer))
      throw new InvalidInputError(`${source} names the issuer ${each.issuer} twice.`, { source });
    seen.add(each.issuer);
  }
  return parsed.data.issuers.map(toConfig);
}

/** Issuers from a file (`--identity FILE`). */
export function loadIdentity(file: string): OidcIssuerConfig[] {
  return parseIdentity(readFileSync(file, "utf8"), file);
}

/** The `--oidc-*` flags of `rein serve`. */
export interface OidcFlags {
  issuers: readonly string[];
  audiences: readonly string[];
  clientId?: string | undefined;
  tenant?: string | undefined;
  tenantClaim?: string | undefined;
  groupsClaim?: string | undefined;
  rolesClaim?: string | undefined;
  consoleScopes?: readonly string[] | undefined;
}

/**
 * Issuers from the flags: each `--oidc-issuer` with the `--oidc-audience` at its position (or the
 * only one given); tenant `--oidc-tenant` (default `default`) or `--oidc-tenant-claim`.
 *
 * @throws InvalidInputError naming the flag to fix.
 */
export function issuersFromFlags(flags: OidcFlags): OidcIssuerConfig[] {
  if (flags.issuers.length === 0) {
    if (flags.audiences.length > 0 || flags.clientId)
      throw new InvalidInputError("--oidc-audience and --oidc-client-id need an --oidc-issuer.");
    return [];
  }
  if (flags.audiences.length !== 1 && flags.audiences.length !== flags.issuers.length)
    throw new InvalidInputError(
      "Give one --oidc-audience for every --oidc-issuer (in the same order), or one for all.",
    );
  if (flags.tenant && flags.tenantClaim)
    throw new InvalidInputError("Pass --oidc-tenant or --oidc-tenant-claim, not both.");
  const claims = {
    ...(flags.tenantClaim ? { tenant: flags.tenantClaim } : {}),
    ...(flags.groupsClaim ? { groups: flags.groupsClaim } : {}),
    ...(flags.rolesClaim ? { roles: flags.rolesClaim } : {}),
  };
  const file = {
    issuers: flags.issuers.map((issuer, index) => ({
      issuer,
      audience: flags.audiences[flags.audiences.length === 1 ? 0 : index],
      ...(flags.clientId && index === 0 ? { clientId: flags.clientId } : {}),
      ...(flags.consoleScopes?.length ? { consoleScopes: [...flags.consoleScopes] } : {}),
      ...(flags.tenantClaim ? {} : { tenant: flags.tenant ?? "default" }),
      ...(Object.keys(claims).length > 0 ? { claims } : {}),
    })),
  };
  return parseIdentity(JSON.stringify(file), "the --oidc-* flags");
}
