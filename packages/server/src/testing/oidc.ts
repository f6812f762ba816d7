/**
 * A real OpenID provider for tests: panva's `oidc-provider` (a certified implementation) served
 * in-process on a loopback port. It issues JWT access tokens to machine clients with the client
 * credentials grant (audience from the resource indicator), with each client's groups, roles and
 * tenant as claims, read at issue time so a change at the provider shows on the next token. Its
 * signing keys rotate on demand: a new key signs from then on, the old one stays published.
 */
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

/** One machine client of the provider and the claims its tokens carry. */
export interface ProviderClient {
  id: string;
  secret: string;
  tenant?: string;
  groups?: string[];
  roles?: string[];
  /** Scopes it may ask for. Default `read run resume`. */
  scope?: string;
  /** Lifetime of its access tokens. Default the provider's. */
  ttlSeconds?: number;
}

/** A running provider. */
export interface TestProvider {
  /** The issuer URL. */
  issuer: string;
  /** The audience (resource indicator) tokens are issued for. */
  audience: string;
  /** A fresh access token of `clientId` (client credentials). */
  token(clientId: string, options?: { scope?: string; resource?: string }): Promise<string>;
  /** The client's claims, changed at the provider (the next token carries them). */
  client(clientId: string): ProviderClient;
  /** Publishes a new signing key and signs with it from now on; returns its kid. */
  rotateKeys(): string;
  /** The kid tokens are signed with now. */
  currentKid(): string;
  /** How many times the JWKS was fetched. */
  jwksFetches(): number;
  close(): Promise<void>;
}

function signingKey(): Record<string, unknown> {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { ...privateKey.export({ format: "jwk" }), kid: randomUUID(), alg: "ES256", use: "sig" };
}

/**
 * Starts a provider on 127.0.0.1 with `clients`, issuing tokens for `audience` with the given
 * lifetime.
 */
export async function startTestProvider(options: {
  clients: ProviderClient[];
  audience?: string;
  accessTokenTtlSeconds?: number;
}): Promise<TestProvider> {
  const audience = options.audience ?? "urn:rein:api";
  const clients = new Map(options.clients.map((c) => [c.id, { ...c }]));
  const keys: Record<string, unknown>[] = [signingKey()];
  let fetches = 0;
  let handler: RequestListener | null = null;
  const server = createServer((req, res) => {
    if (req.url?.startsWith("/jwks")) fetches += 1;
    handler?.(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const build = (): void => {
    const provider = new Provider(issuer, {
      clients: [...clients.values()].map((c) => ({
        client_id: c.id,
        client_secret: c.secret,
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
        scope: c.scope ?? "read run resume",
      })),
      jwks: { keys },
      clientDefaults: { id_token_signed_response_alg: "ES256" },
      ttl: {
        ClientCredentials: (_ctx: unknown, _token: unknown, client: { clientId: string }) =>
          clients.get(client.clientId)?.ttlSeconds ?? options.accessTokenTtlSeconds ?? 300,
      },
      scopes: ["openid", "read", "run", "resume", "admin"],
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => audience,
          useGrantedResource: () => true,
          getResourceServerInfo: (
            _ctx: unknown,
            resource: string,
            client: { clientId: string },
          ) => ({
            scope: "read run resume admin",
            audience: resource,
            accessTokenTTL:
              clients.get(client.clientId)?.ttlSeconds ?? options.accessTokenTtlSeconds ?? 300,
            accessTokenFormat: "jwt",
            jwt: { sign: { alg: "ES256" } },
          }),
        },
      },
      extraTokenClaims: (_ctx: unknown, token: { clientId?: string }) => {
        const c = token.clientId ? clients.get(token.clientId) : undefined;
        return c
          ? {
              ...(c.tenant ? { tenant: c.tenant } : {}),
              groups: c.groups ?? [],
              roles: c.roles ?? [],
            }
          : {};
      },
    });
    handler = provider.callback();
  };
  build();

  return {
    issuer,
    audience,
    async token(clientId, opts = {}) {
      const c = clients.get(clientId);
      if (!c) throw new Error(`no client ${clientId}`);
      const body = new URLSearchParams({
        grant_type: "client_credentials",
        scope: opts.scope ?? c.scope ?? "read run resume",
        resource: opts.resource ?? audience,
      });
      const response = await fetch(`${issuer}/token`, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${c.id}:${c.secret}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body,
      });
      const json = (await response.json()) as { access_token?: string; error?: string };
      if (!json.access_token) throw new Error(`token refused: ${JSON.stringify(json)}`);
      return json.access_token;
    },
    client(clientId) {
      const c = clients.get(clientId);
      if (!c) throw new Error(`no client ${clientId}`);
      return c;
    },
    rotateKeys() {
      keys.unshift(signingKey());
      build();
      return String(keys[0]!["kid"]);
    },
    currentKid: () => String(keys[0]!["kid"]),
    jwksFetches: () => fetches,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
