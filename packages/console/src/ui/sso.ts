/**
 * Single sign-on: the OpenID Connect Authorization Code flow with PKCE (S256) against the issuer
 * the server names in `GET /auth/config`, through panva's `oauth4webapi` (no hand-written
 * protocol code). The console is a public client: no secret, the PKCE verifier proves that the
 * tab that started the sign-in is the one that redeems the code.
 *
 * Storage: the PKCE verifier, the state and the route to come back to sit in sessionStorage only
 * between leaving for the provider and coming back (a full page navigation wipes memory); they are
 * removed as soon as the code is redeemed. Tokens never touch web storage: they live in this
 * module's objects, in memory, and die with the page.
 */
import * as oauth from "oauth4webapi";
import type { AuthSettings } from "@rein/client";

/** The console's issuer settings, as `GET /auth/config` gives them. */
export type OidcSettings = NonNullable<AuthSettings["oidc"]>;

const PENDING = "rein.console.sso.pending";

/** What is kept across the round trip to the provider. */
interface Pending {
  issuer: string;
  verifier: string;
  state: string;
  /** The console route (hash) the reviewer was on. */
  hash: string;
}

/** A sign-in that failed in a way the reviewer can act on. */
export class SsoError extends Error {
  override name = "SsoError";
}

/** Who signed in, from the ID token's claims. */
export interface SsoIdentity {
  subject: string;
  name: string | null;
  email: string | null;
}

/** The tokens of a signed-in reviewer, in memory. */
interface Tokens {
  access: string;
  refresh: string | null;
  id: string | null;
  /** When the access token expires (ms since the epoch), or null when the provider did not say. */
  expiresAt: number | null;
}

/** The provider as the flow needs it: its metadata, the console's client and the request options. */
interface Flow {
  settings: OidcSettings;
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  redirectUri: string;
  options: { [oauth.allowInsecureRequests]?: boolean };
}

/**
 * Plain http is allowed only for an issuer on this machine (a provider for local use and tests);
 * anywhere else the provider must be https, as oauth4webapi requires.
 */
function loopback(url: URL): boolean {
  return ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
}

/** Where the provider sends the reviewer back: the console's own page, without route. */
function redirectUri(): string {
  return `${window.location.origin}${window.location.pathname}`;
}

async function discover(settings: OidcSettings): Promise<Flow> {
  const issuer = new URL(settings.issuer);
  const options = loopback(issuer) ? { [oauth.allowInsecureRequests]: true } : {};
  let as: oauth.AuthorizationServer;
  try {
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, options),
    );
  } catch (error) {
    throw new SsoError(
      `Could not reach the identity provider ${settings.issuer} (${String(error instanceof Error ? error.message : error)}). Try again, or ask an admin to check the server's issuer setting.`,
    );
  }
  return {
    settings,
    as,
    client: { client_id: settings.clientId },
    redirectUri: redirectUri(),
    options,
  };
}

/** The audience the server checks, asked for with a resource indicator (RFC 8707). */
function resource(flow: Flow): Record<string, string> {
  return { resource: flow.settings.audience };
}

/**
 * Leaves for the provider's sign-in page; the provider sends the reviewer back to this page with
 * a code that {@link completeSignIn} redeems.
 */
export async function startSignIn(settings: OidcSettings): Promise<void> {
  const flow = await discover(settings);
  if (!flow.as.authorization_endpoint)
    throw new SsoError(`The identity provider ${settings.issuer} has no authorization endpoint.`);
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const pending: Pending = { issuer: settings.issuer, verifier, state, hash: window.location.hash };
  window.sessionStorage.setItem(PENDING, JSON.stringify(pending));
  const url = new URL(flow.as.authorization_endpoint);
  url.search = new URLSearchParams({
    client_id: settings.clientId,
    redirect_uri: flow.redirectUri,
    response_type: "code",
    scope: settings.scopes.join(" "),
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    ...resource(flow),
  }).toString();
  window.location.assign(url.href);
}

/** True when this page load is the provider sending the reviewer back to a sign-in of this tab. */
export function isSignInCallback(): boolean {
  const params = new URLSearchParams(window.location.search);
  return params.has("state") && window.sessionStorage.getItem(PENDING) !== null;
}

function takePending(): Pending {
  const text = window.sessionStorage.getItem(PENDING);
  window.sessionStorage.removeItem(PENDING);
  if (!text) throw new SsoError("This sign-in was not started in this tab. Sign in again.");
  return JSON.parse(text) as Pending;
}

function tokensOf(response: oauth.TokenEndpointResponse, previous?: Tokens): Tokens {
  return {
    access: response.access_token,
    // A provider that does not rotate refresh tokens answers a refresh without a new one.
    refresh: response.refresh_token ?? previous?.refresh ?? null,
    id: response.id_token ?? previous?.id ?? null,
    expiresAt:
      typeof response.expires_in === "number" ? Date.now() + response.expires_in * 1000 : null,
  };
}

function identityOf(claims: oauth.IDToken): SsoIdentity {
  const text = (value: unknown) => (typeof value === "string" && value ? value : null);
  return { subject: claims.sub, name: text(claims["name"]), email: text(claims["email"]) };
}

/**
 * Redeems the code the provider sent back (checking the state and proving PKCE), takes the
 * code, state and verifier out of the URL and sessionStorage, and puts the reviewer back on the
 * route they left from.
 */
export async function completeSignIn(settings: OidcSettings): Promise<SsoSession> {
  const pending = takePending();
  const current = new URL(window.location.href);
  window.history.replaceState(null, "", `${current.pathname}${pending.hash}`);
  if (pending.issuer !== settings.issuer)
    throw new SsoError("The server's identity provider changed during the sign-in. Sign in again.");
  const flow = await discover(settings);
  try {
    const params = oauth.validateAuthResponse(flow.as, flow.client, current, pending.state);
    const response = await oauth.authorizationCodeGrantRequest(
      flow.as,
      flow.client,
      oauth.None(),
      params,
      flow.redirectUri,
      pending.verifier,
      { ...flow.options, additionalParameters: resource(flow) },
    );
    const result = await oauth.processAuthorizationCodeResponse(flow.as, flow.client, response, {
      requireIdToken: true,
    });
    const claims = oauth.getValidatedIdTokenClaims(result);
    if (!claims) throw new SsoError("The identity provider sent no ID token.");
    return new SsoSession(flow, tokensOf(result), identityOf(claims));
  } catch (error) {
    if (error instanceof SsoError) throw error;
    const detail =
      error instanceof oauth.AuthorizationResponseError
        ? (error.error_description ?? error.error)
        : error instanceof Error
          ? error.message
          : String(error);
    throw new SsoError(`The identity provider did not sign you in: ${detail}. Sign in again.`);
  }
}

/** Why a single sign-on session ended without the reviewer signing out. */
export type EndReason = "expired";

/**
 * A signed-in reviewer's tokens, in memory: the bearer token for each API request, renewed with
 * the refresh token before it expires (when the provider gave one), otherwise ended at expiry so
 * the console asks to sign in again.
 */
export class SsoSession {
  private tokens: Tokens | null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private renewing: Promise<boolean> | null = null;
  private readonly listeners = new Set<(reason: EndReason) => void>();

  /** Who signed in. */
  identity: SsoIdentity;

  constructor(
    private readonly flow: Flow,
    tokens: Tokens,
    identity: SsoIdentity,
  ) {
    this.tokens = tokens;
    this.identity = identity;
    this.schedule();
  }

  /** The issuer the reviewer signed in with. */
  get issuer(): string {
    return this.flow.settings.issuer;
  }

  /** Calls `listener` when the session ends on its own (expiry without a usable refresh). */
  onEnd(listener: (reason: EndReason) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * `fetch` with the current access token; a 401 with a refresh token at hand renews once and
   * retries (a token revoked or expired early at the provider). After sign-out it sends no token.
   */
  readonly fetch: typeof fetch = async (input, init) => {
    const send = (token: string | null) => {
      const headers = new Headers(init?.headers);
      if (token) headers.set("authorization", `Bearer ${token}`);
      return globalThis.fetch(input, { ...init, headers });
    };
    const sent = this.tokens?.access ?? null;
    const response = await send(sent);
    if (response.status !== 401 || !this.tokens?.refresh) return response;
    // Another request may have renewed meanwhile; renew only if the token is still the one sent.
    if (this.tokens.access === sent && !(await this.renew())) return response;
    return send(this.tokens?.access ?? null);
  };

  /** Renews the access token with the refresh token; false (and the session ended) if refused. */
  renew(): Promise<boolean> {
    this.renewing ??= this.refresh().finally(() => (this.renewing = null));
    return this.renewing;
  }

  private async refresh(): Promise<boolean> {
    const before = this.tokens;
    if (!before?.refresh) return false;
    try {
      const response = await oauth.refreshTokenGrantRequest(
        this.flow.as,
        this.flow.client,
        oauth.None(),
        before.refresh,
        { ...this.flow.options, additionalParameters: resource(this.flow) },
      );
      const result = await oauth.processRefreshTokenResponse(
        this.flow.as,
        this.flow.client,
        response,
      );
      if (this.tokens !== before) return this.tokens !== null; // signed out meanwhile
      this.tokens = tokensOf(result, before);
      const claims = oauth.getValidatedIdTokenClaims(result);
      if (claims) this.identity = identityOf(claims);
      this.schedule();
      return true;
    } catch {
      this.end("expired");
      return false;
    }
  }

  /**
   * Renews at three quarters of the token's life (at most a minute early) when there is a refresh
   * token; without one, ends the session when the token expires.
   */
  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const tokens = this.tokens;
    if (!tokens?.expiresAt) return;
    const left = tokens.expiresAt - Date.now();
    if (tokens.refresh) {
      const early = Math.min(60_000, left / 4);
      this.timer = setTimeout(() => void this.renew(), Math.max(0, left - early));
    } else {
      this.timer = setTimeout(() => this.end("expired"), Math.max(0, left));
    }
  }

  private end(reason: EndReason): void {
    this.clear();
    for (const listener of this.listeners) listener(reason);
  }

  private clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.tokens = null;
  }

  /**
   * Signs out: revokes the refresh token where the provider offers revocation, forgets every
   * token, and returns the provider's end-session URL (RP-initiated logout, which ends the
   * provider's own session and comes back to the console), or null when it advertises none.
   */
  async signOut(): Promise<string | null> {
    const tokens = this.tokens;
    this.clear();
    this.listeners.clear();
    const { as, client, options } = this.flow;
    if (tokens?.refresh && as.revocation_endpoint) {
      try {
        await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh, options);
      } catch {
        // Best effort: the tokens are forgotten either way, and logout ends the provider session.
      }
    }
    if (!as.end_session_endpoint) return null;
    const url = new URL(as.end_session_endpoint);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      post_logout_redirect_uri: this.flow.redirectUri,
      ...(tokens?.id ? { id_token_hint: tokens.id } : {}),
    }).toString();
    return url.href;
  }
}
