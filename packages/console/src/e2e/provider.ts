/**
 * A real OpenID provider for the console's single sign-on: panva's `oidc-provider` (a certified
 * implementation) in-process on a loopback port, with the console as a public client (no secret,
 * PKCE required, its page on the Rein server as redirect and post-logout URI). People sign in on
 * the provider's own development pages (any password); the ID token names them, the JWT access
 * token (audience from the resource indicator) carries their tenant and groups, read when it is
 * issued (a change at the provider shows on the next token). Several consoles (one per store
 * backend) can share one provider; its signing keys rotate on demand, and its access tokens can be
 * cut short (expiring before the lifetime the token response states).
 */
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

/** A person who can sign in at the provider. */
export interface Person {
  /** The login typed on the provider's page; also the `sub` claim. */
  login: string;
  name: string;
  email: string;
  tenant: string;
  groups?: string[];
}

/** A running provider. */
export interface SsoProvider {
  issuer: string;
  audience: string;
  clientId: string;
  /** Adds the console served at `url` to the public client's redirect and logout URIs. */
  allowConsole(url: string): void;
  /** The person as the provider knows them now; a change (groups) shows on their next token. */
  person(login: string): Person;
  /** Publishes a new signing key and signs with it from now on (the old stays published). */
  rotateKeys(): string;
  /** The kid tokens are signed with now. */
  currentKid(): string;
  /**
   * From now on, access tokens expire `seconds` after issue while the token response still
   * states the full lifetime, as a token the provider cut short; null restores the lifetime.
   */
  cutShort(seconds: number | null): void;
  close(): Promise<void>;
}

/** What the provider stores of one artifact (session, grant, code, token...). */
type Stored = Record<string, unknown> & { grantId?: string; uid?: string; userCode?: string };

/**
 * The provider's storage as an adapter factory that outlives one `Provider` (its built-in
 * memory adapter is per instance): a provider rebuilt for a key rotation keeps the sessions,
 * grants and refresh tokens. Nothing expires here; the tests' artifacts live seconds.
 */
function lastingStorage(): (model: string) => Record<string, unknown> {
  const items = new Map<string, Stored>();
  return (model) => {
    const key = (id: string) => `${model}:${id}`;
    const by = (field: "uid" | "userCode", value: string) =>
      [...items.entries()].find(([k, v]) => k.startsWith(`${model}:`) && v[field] === value)?.[1];
    return {
      upsert: (id: string, payload: Stored) => void items.set(key(id), payload),
      find: (id: string) => items.get(key(id)),
      findByUid: (uid: string) => by("uid", uid),
      findByUserCode: (code: string) => by("userCode", code),
      consume: (id: string) => {
        const item = items.get(key(id));
        if (item) item["consumed"] = Math.floor(Date.now() / 1000);
      },
      destroy: (id: string) => void items.delete(key(id)),
      revokeByGrantId: (grantId: string) => {
        for (const [k, v] of items) if (v.grantId === grantId) items.delete(k);
      },
    };
  };
}

function signingKey(): Record<string, unknown> {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { ...privateKey.export({ format: "jwk" }), kid: randomUUID(), alg: "ES256", use: "sig" };
}

/** The provider's configuration: the console's public client, the people, the API as resource. */
function configuration(c: {
  clientId: string;
  pages: string[];
  audience: string;
  people: Map<string, Person>;
  ttl: number;
  refresh: boolean | undefined;
  keys: Record<string, unknown>[];
  cookieKey: string;
  adapter: (model: string) => Record<string, unknown>;
  /** Seconds an access token really lives, or null for the full lifetime. */
  short: () => number | null;
}): Record<string, unknown> {
  const { clientId, pages, audience, people, ttl } = c;
  return {
    clients: [
      {
        client_id: clientId,
        token_endpoint_auth_method: "none",
        application_type: "web",
        redirect_uris: pages,
        post_logout_redirect_uris: pages,
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        scope: "openid profile email read run resume",
      },
    ],
    // A public client must prove PKCE (S256), whatever the library's default becomes.
    pkce: { required: () => true },
    adapter: c.adapter,
    jwks: { keys: c.keys },
    cookies: { keys: [c.cookieKey] },
    clientDefaults: { id_token_signed_response_alg: "ES256" },
    claims: { openid: ["sub"], profile: ["name"], email: ["email"] },
    scopes: ["openid", "profile", "email", "offline_access", "read", "run", "resume"],
    findAccount: (_ctx: unknown, id: string) => {
      const person = people.get(id);
      if (!person) return undefined;
      return {
        accountId: id,
        claims: () => ({ sub: id, name: person.name, email: person.email }),
      };
    },
    issueRefreshToken: () => c.refresh === true,
    features: {
      devInteractions: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => ({
          scope: "read run resume",
          audience: resource,
          accessTokenTTL: ttl,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "ES256" } },
        }),
      },
    },
    formats: {
      customizers: {
        jwt: (_ctx: unknown, _token: unknown, jwt: { payload: { iat: number; exp: number } }) => {
          const short = c.short();
          if (short !== null) jwt.payload.exp = jwt.payload.iat + short;
        },
      },
    },
    extraTokenClaims: (_ctx: unknown, token: { accountId?: string }) => {
      const person = token.accountId ? people.get(token.accountId) : undefined;
      return person ? { tenant: person.tenant, groups: person.groups ?? [] } : {};
    },
  };
}

/**
 * Starts the provider on 127.0.0.1. Access tokens live `accessTokenTtlSeconds` (default 300); with
 * `refreshTokens` the console gets a refresh token to renew them with.
 */
export async function startSsoProvider(options: {
  people: Person[];
  accessTokenTtlSeconds?: number;
  refreshTokens?: boolean;
}): Promise<SsoProvider> {
  const audience = "urn:rein:console-api";
  const clientId = "rein-console";
  const people = new Map(
    options.people.map((p) => [p.login, { ...p, groups: [...(p.groups ?? [])] }]),
  );
  const ttl = options.accessTokenTtlSeconds ?? 300;
  const pages: string[] = [];
  const keys = [signingKey()];
  const cookieKey = randomUUID();
  const adapter = lastingStorage();
  let short: number | null = null;
  let handler: RequestListener | null = null;
  const server = createServer((req, res) => {
    if (handler) handler(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // A new Provider over the same keys, cookie key and storage: sessions, grants and refresh
  // tokens carry over.
  const build = (): void => {
    const config = configuration({
      clientId,
      pages,
      audience,
      people,
      ttl,
      refresh: options.refreshTokens,
      keys,
      cookieKey,
      adapter,
      short: () => short,
    });
    handler = new Provider(issuer, config).callback();
  };

  return {
    issuer,
    audience,
    clientId,
    allowConsole(url) {
      pages.push(`${url.replace(/\/+$/, "")}/`);
      build();
    },
    person(login) {
      const person = people.get(login);
      if (!person) throw new Error(`no person ${login}`);
      return person;
    },
    rotateKeys() {
      keys.unshift(signingKey());
      build();
      return String(keys[0]!["kid"]);
    },
    currentKid: () => String(keys[0]!["kid"]),
    cutShort(seconds) {
      short = seconds;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
