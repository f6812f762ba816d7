/**
 * JWT bearer tokens of configured OpenID issuers, verified with `jose`: the issuer's metadata is
 * discovered (`/.well-known/openid-configuration`), its JWKS fetched and cached; a `kid` the
 * cache lacks triggers one refetch, at most once per cooldown. Signature, `iss`, `aud`,
 * `exp`/`nbf` (with leeway) and the algorithm allow-list are checked before any claim is read.
 */
import {
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JWTVerifyGetKey,
} from "jose";
import { ErrorCodes } from "@rein/core";
import { ClaimError, principalOf, type ClaimMapping } from "./claims.ts";
import { CredentialError, IdentityUnavailableError } from "./errors.ts";
import type { Principal } from "./principal.ts";

/** Signature algorithms of public keys, the only ones a token may use (never `none` or `HS*`). */
export const PUBLIC_KEY_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
] as const;

/** One issuer as configured (see docs/identity.md). */
export interface OidcIssuerConfig extends ClaimMapping {
  /** Accepted `aud` values: a token must carry one. */
  audience: readonly string[];
  /** The console's public client id at this issuer (`GET /auth/config`). */
  clientId?: string | undefined;
  /** Scopes the console asks for when it signs in. */
  consoleScopes?: readonly string[] | undefined;
  /** The JWKS URL, skipping discovery. Default: discovered. */
  jwksUri?: string | undefined;
  /** Accepted algorithms. Default: {@link PUBLIC_KEY_ALGORITHMS}. */
  algorithms?: readonly string[] | undefined;
  /** Clock leeway of `exp`, `nbf` and `iat`, seconds. Default 30. */
  leewaySeconds?: number | undefined;
  /** Least time between two JWKS fetches a new `kid` may trigger, seconds. Default 30. */
  jwksCooldownSeconds?: number | undefined;
}

/** Fetch used for discovery (the JWKS fetch is jose's). */
type Fetch = (url: string, init: { signal: AbortSignal }) => Promise<Response>;

/** How long a failed discovery is not retried, so a provider outage costs one fetch per window. */
const DISCOVERY_RETRY_MS = 5_000;

/** One issuer: its keys (discovered once) and its claim mapping. */
class Issuer {
  private keys: JWTVerifyGetKey | null = null;
  private pending: Promise<JWTVerifyGetKey> | null = null;
  private failedAt = 0;
  private failure = "";

  constructor(
    readonly config: OidcIssuerConfig,
    private readonly fetchImpl: Fetch,
  ) {}

  private jwks(uri: string): JWTVerifyGetKey {
    return createRemoteJWKSet(new URL(uri), {
      cooldownDuration: (this.config.jwksCooldownSeconds ?? 30) * 1000,
      timeoutDuration: 5_000,
    });
  }

  private async discover(): Promise<JWTVerifyGetKey> {
    if (this.config.jwksUri) return this.jwks(this.config.jwksUri);
    const url = `${this.config.issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
    const response = await this.fetchImpl(url, { signal: AbortSignal.timeout(5_000) });
    if (!response.ok) throw new Error(`discovery answered ${response.status}`);
    const metadata = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
    if (metadata.issuer !== this.config.issuer)
      throw new Error(`discovery names another issuer (${String(metadata.issuer).slice(0, 200)})`);
    if (typeof metadata.jwks_uri !== "string") throw new Error("discovery names no jwks_uri");
    return this.jwks(metadata.jwks_uri);
  }

  /** The key resolver, discovering it on first use; a failed discovery is retried after a pause. */
  async keyResolver(): Promise<JWTVerifyGetKey> {
    if (this.keys) return this.keys;
    if (Date.now() - this.failedAt < DISCOVERY_RETRY_MS)
      throw new IdentityUnavailableError(this.config.issuer, this.failure);
    this.pending ??= this.discover().then(
      (keys) => (this.keys = keys),
      (error: unknown) => {
        this.failedAt = Date.now();
        this.failure = error instanceof Error ? error.message : String(error);
        this.pending = null;
        throw new IdentityUnavailableError(this.config.issuer, this.failure);
      },
    );
    return this.pending;
  }
}

/** Whether a bearer credential has the shape of a JWS compact serialization. */
export function looksLikeJwt(credential: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(credential);
}

/** The configured issuers, verifying tokens into principals. */
export class OidcVerifier {
  private readonly byIssuer = new Map<string, Issuer>();

  constructor(configs: readonly OidcIssuerConfig[], fetchImpl: Fetch = (u, i) => fetch(u, i)) {
    for (const config of configs) this.byIssuer.set(config.issuer, new Issuer(config, fetchImpl));
  }

  /** The issuers, as configured. */
  get issuers(): OidcIssuerConfig[] {
    return [...this.byIssuer.values()].map((each) => each.config);
  }

  /**
   * The principal of a JWT.
   *
   * @throws CredentialError (401) with a `token_*` code saying what is wrong;
   *   IdentityUnavailableError (503) when the issuer's keys cannot be read.
   */
  async verify(token: string): Promise<Principal> {
    const issuer = this.issuerOf(token);
    const keys = await issuer.keyResolver();
    const config = issuer.config;
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: config.issuer,
        audience: [...config.audience],
        algorithms: [...(config.algorithms ?? PUBLIC_KEY_ALGORITHMS)],
        clockTolerance: config.leewaySeconds ?? 30,
        requiredClaims: ["exp"],
      }));
    } catch (error) {
      throw refusal(error, config);
    }
    try {
      return principalOf(payload, config);
    } catch (error) {
      if (error instanceof ClaimError)
        throw new CredentialError(ErrorCodes.TOKEN_CLAIMS, error.message, {
          issuer: config.issuer,
        });
      throw error;
    }
  }

  /** The configured issuer the token names (read before verification, only to pick its keys). */
  private issuerOf(token: string): Issuer {
    let iss: unknown;
    try {
      const header = decodeProtectedHeader(token);
      if (typeof header.alg !== "string" || header.alg === "none" || header.alg.startsWith("HS"))
        throw new CredentialError(
          ErrorCodes.TOKEN_ALGORITHM,
          `The token is signed with ${JSON.stringify(String(header.alg).slice(0, 20))}, which this server never accepts; use a token signed by the issuer's private key (RS256, ES256, EdDSA...).`,
        );
      iss = decodeJwt(token).iss;
    } catch (error) {
      if (error instanceof CredentialError) throw error;
      throw new CredentialError(
        ErrorCodes.TOKEN_INVALID,
        "The bearer token is not a well-formed JWT; send the access token the issuer returned, whole.",
      );
    }
    const issuer = typeof iss === "string" ? this.byIssuer.get(iss) : undefined;
    if (!issuer)
      throw new CredentialError(
        ErrorCodes.TOKEN_ISSUER,
        `The token's issuer is not one this server trusts; get a token from ${[...this.byIssuer.keys()].join(" or ")}.`,
        { issuers: [...this.byIssuer.keys()] },
      );
    return issuer;
  }
}

/** The 401 (or 503) a verification failure answers. */
function refusal(error: unknown, config: OidcIssuerConfig): Error {
  const at = { issuer: config.issuer };
  if (error instanceof errors.JWTExpired)
    return new CredentialError(
      ErrorCodes.TOKEN_EXPIRED,
      "The token has expired; get a new one from the issuer (sign in again, or refresh).",
      at,
    );
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "aud")
      return new CredentialError(
        ErrorCodes.TOKEN_AUDIENCE,
        `The token is not for this API; ask the issuer for a token whose audience is ${config.audience.join(" or ")}.`,
        { ...at, audience: [...config.audience] },
      );
    if (error.claim === "iss")
      return new CredentialError(
        ErrorCodes.TOKEN_ISSUER,
        `The token's issuer is not ${config.issuer}; get a token from it.`,
        at,
      );
    if (error.claim === "nbf")
      return new CredentialError(
        ErrorCodes.TOKEN_NOT_YET_VALID,
        "The token is not valid yet (nbf is in the future); check the clocks of the issuer and of this server.",
        at,
      );
    return new CredentialError(
      ErrorCodes.TOKEN_CLAIMS,
      `The token's ${error.claim} claim is missing or invalid; get a new token from the issuer.`,
      { ...at, claim: error.claim },
    );
  }
  if (error instanceof errors.JOSEAlgNotAllowed)
    return new CredentialError(
      ErrorCodes.TOKEN_ALGORITHM,
      `The token's algorithm is not allowed; this server accepts ${(config.algorithms ?? PUBLIC_KEY_ALGORITHMS).join(", ")}.`,
      at,
    );
  if (error instanceof errors.JWKSNoMatchingKey)
    return new CredentialError(
      ErrorCodes.TOKEN_UNKNOWN_KEY,
      "The token is signed with a key the issuer does not publish (an unknown kid); get a new token from the issuer.",
      at,
    );
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return new CredentialError(
      ErrorCodes.TOKEN_SIGNATURE,
      "The token's signature does not verify with the issuer's keys; it was altered or forged. Get a token from the issuer.",
      at,
    );
  if (
    error instanceof errors.JWKSTimeout ||
    error instanceof errors.JWKSInvalid ||
    // jose's error for a JWKS endpoint that does not answer 200.
    (error instanceof errors.JOSEError && error.code === "ERR_JOSE_GENERIC")
  )
    return new IdentityUnavailableError(config.issuer, error.code);
  if (error instanceof errors.JOSEError)
    return new CredentialError(
      ErrorCodes.TOKEN_INVALID,
      "The bearer token is not a valid JWT of this issuer; send the access token the issuer returned, whole.",
      at,
    );
  // A failed JWKS fetch (network, HTTP error) surfaces as a plain error from jose.
  return new IdentityUnavailableError(
    config.issuer,
    error instanceof Error ? error.message.slice(0, 200) : "unknown",
  );
}
