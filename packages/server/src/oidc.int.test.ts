/**
 * OpenID bearer tokens from a real provider (`oidc-provider`, in-process on loopback), on SQLite
 * and on Postgres: a token of the configured issuer is accepted on the API beside the tokens
 * file; forged, expired, wrong-audience, wrong-issuer, `alg: none` and unknown-`kid` tokens are
 * 401 JSON with their code and change nothing; the provider's key rotation is picked up with one
 * JWKS refetch; approval policies read groups from the claims (a group removed at the provider
 * refuses the next token), and four-eyes takes two real identities.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT, base64url, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { tokenAuth } from "./auth.ts";
import { parseIdentity } from "./identity/config.ts";
import { graphs as governedGraphs } from "./testing/governed-graphs.ts";
import {
  TOKENS,
  client,
  postgresBackend,
  snapshotStore,
  sqliteBackend,
  startTestServer,
  type Backend,
  type TestServer,
  type TestStore,
} from "./testing/harness.ts";
import { startTestProvider, type TestProvider } from "./testing/oidc.ts";
import { launchRein, TEST_GRAPHS, type Proc } from "./testing/processes.ts";

type Json = Record<string, unknown>;

/** The identity file of a provider, as an operator writes it. */
function identityOf(provider: TestProvider, over: Json = {}) {
  return parseIdentity(
    JSON.stringify({
      issuers: [
        {
          issuer: provider.issuer,
          audience: provider.audience,
          clientId: "rein-console",
          claims: { tenant: "tenant", groups: "groups", roles: "roles" },
          leewaySeconds: 0,
          ...over,
        },
      ],
    }),
    "identity.json",
  );
}

const CLIENTS = [
  { id: "ci-bot", secret: "ci-bot-secret-0123456789", tenant: "acme", groups: ["bots"] },
  { id: "alice", secret: "alice-secret-0123456789", tenant: "acme", groups: ["finance"] },
  { id: "bob", secret: "bob-secret-0123456789ab", tenant: "acme", groups: ["finance"] },
  { id: "brief", secret: "brief-secret-0123456789", tenant: "acme", ttlSeconds: 1 },
];

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`OpenID tokens on ${backend.name}`, () => {
    let provider: TestProvider;
    let stranger: TestProvider;
    let store: TestStore;
    let server: TestServer;

    beforeAll(async () => {
      provider = await startTestProvider({ clients: CLIENTS.map((c) => ({ ...c })) });
      stranger = await startTestProvider({ clients: [CLIENTS[0]!] });
      store = await backend.create();
      server = await startTestServer(store.store, {
        graphs: governedGraphs,
        auth: tokenAuth(Object.values(TOKENS), identityOf(provider)),
      });
    }, 60_000);
    afterAll(async () => {
      await server?.close();
      await store?.destroy();
      await provider?.close();
      await stranger?.close();
    });

    it("accepts a token of the issuer: whoami names issuer, qualified subject, tenant and groups; the tokens file still works", async () => {
      const token = await provider.token("ci-bot");
      const me = await client(server.url, token)("GET", "/whoami");
      expect(me.status).toBe(200);
      expect(me.body).toEqual({
        subject: `${provider.issuer}#ci-bot`,
        issuer: provider.issuer,
        tenant: "acme",
        scopes: ["read", "resume", "run"],
        groups: ["bots"],
        roles: [],
      });
      const alice = await client(server.url, TOKENS["alice"]!.token)("GET", "/whoami");
      expect(alice.body).toMatchObject({ subject: "alice@acme" });
    });

    it("GET /auth/config names the issuer, the console's client id, audience and scopes, without a token", async () => {
      const settings = await client(server.url, null)("GET", "/auth/config");
      expect(settings.status).toBe(200);
      expect(settings.body).toEqual({
        oidc: {
          issuer: provider.issuer,
          clientId: "rein-console",
          audience: provider.audience,
          scopes: ["openid", "profile", "email"],
        },
      });
    });

    it("refuses bad tokens with 401 and a stable code saying what to fix; none changes anything or echoes the token", async () => {
      const good = await provider.token("ci-bot");
      const [header, payload] = good.split(".") as [string, string];
      const claims = JSON.parse(new TextDecoder().decode(base64url.decode(payload))) as Json;
      const { privateKey } = await generateKeyPair("ES256");
      const forge = (kid: string, over: Json = {}) =>
        new SignJWT({ ...claims, ...over })
          .setProtectedHeader({ alg: "ES256", kid })
          .sign(privateKey);
      const none = `${base64url.encode(JSON.stringify({ alg: "none", typ: "JWT" }))}.${payload}.`;
      const expiredToken = await provider.token("brief");
      await new Promise((r) => setTimeout(r, 2_200));
      const cases: [string, string, string][] = [
        [
          "forged (the provider's kid, another key)",
          await forge(provider.currentKid()),
          "token_signature",
        ],
        ["expired", expiredToken, "token_expired"],
        [
          "wrong audience",
          await provider.token("ci-bot", { resource: "urn:other:api" }),
          "token_audience",
        ],
        ["wrong issuer", await stranger.token("ci-bot"), "token_issuer"],
        ["alg none", none, "token_algorithm"],
        ["unknown kid", await forge("no-such-kid"), "token_unknown_key"],
        [
          "altered payload",
          `${header}.${base64url.encode(JSON.stringify({ ...claims, tenant: "globex" }))}.${good.split(".")[2]}`,
          "token_signature",
        ],
        ["not a JWT at all", "a.b.c", "token_invalid"],
      ];
      const before = await snapshotStore(store.store);
      for (const [what, token, code] of cases) {
        const reply = await client(server.url, token)("POST", "/threads", {
          graph: "governed",
          threadId: `bad-${code}`,
        });
        expect(reply.status, what).toBe(401);
        expect(reply.body["error"], what).toBe(code);
        expect(String(reply.body["message"]).length, what).toBeGreaterThan(20);
        expect(JSON.stringify(reply.body), what).not.toContain(token.slice(-20));
      }
      expect(await snapshotStore(store.store)).toBe(before);
      // The same token on the LangGraph protocol's routes: 401 too, never a 500.
      const lg = await fetch(`${server.url}/langgraph/threads/search`, {
        method: "POST",
        headers: { "x-api-key": none, "content-type": "application/json" },
        body: "{}",
      });
      expect(lg.status).toBe(401);
    });

    it("a group removed at the provider: that reviewer's next token can no longer approve (403, answer unchanged); four-eyes takes two real identities", async () => {
      const requester = client(server.url, await provider.token("ci-bot"));
      await requester("POST", "/threads", { graph: "governed", threadId: "refund-1" });
      const run = await requester<{ status: string; interrupts: { id: string }[] }>(
        "POST",
        "/threads/refund-1/runs",
        { input: { amount: 4000 }, wait: true },
      );
      expect(run.body.status).toBe("interrupted");
      const approve = async (who: string) =>
        client(server.url, await provider.token(who))<Json>("POST", "/threads/refund-1/resume", {
          resume: { type: "accept" },
        });

      provider.client("alice").groups = [];
      const before = await snapshotStore(store.store);
      const removed = await approve("alice");
      expect(removed.status).toBe(403);
      expect(removed.body).toMatchObject({ error: "not_allowed", details: { rule: "not_listed" } });
      expect(await snapshotStore(store.store)).toBe(before);

      provider.client("alice").groups = ["finance"];
      const first = await approve("alice");
      expect(first.status).toBe(200);
      expect(first.body["status"]).toBe("interrupted");
      const again = await approve("alice");
      expect(again.status).toBe(403);
      expect((again.body["details"] as Json)["rule"]).toBe("already_approved");
      const second = await approve("bob");
      expect(second.status).toBe(200);
      expect(second.body["status"]).toBe("done");
      const audit = await requester<{ items: { action: string; actor: string }[] }>(
        "GET",
        "/audit?threadId=refund-1",
      );
      expect(audit.body.items.map((a) => `${a.action}:${a.actor}`)).toEqual([
        `approval:${provider.issuer}#alice`,
        `answer:${provider.issuer}#bob`,
      ]);
    });
  });
}

suite(sqliteBackend);
suite(await postgresBackend());

describe("the provider rotates its signing key", () => {
  let provider: TestProvider;
  let store: TestStore;
  let server: TestServer;

  beforeAll(async () => {
    provider = await startTestProvider({ clients: [CLIENTS[0]!] });
    store = await sqliteBackend.create();
    server = await startTestServer(store.store, {
      auth: tokenAuth([], identityOf(provider, { jwksCooldownSeconds: 2 })),
    });
  });
  afterAll(async () => {
    await server.close();
    await store.destroy();
    await provider.close();
  });

  it("a token of the new key is accepted after one JWKS refetch; unknown kids within the cooldown fetch nothing more", async () => {
    const oldKid = provider.currentKid();
    const before = await provider.token("ci-bot");
    expect((await client(server.url, before)("GET", "/whoami")).status).toBe(200);
    expect(provider.jwksFetches()).toBe(1);
    await new Promise((r) => setTimeout(r, 2_100));

    const newKid = provider.rotateKeys();
    expect(newKid).not.toBe(oldKid);
    const after = await provider.token("ci-bot");
    expect(
      JSON.parse(new TextDecoder().decode(base64url.decode(after.split(".")[0]!))),
    ).toMatchObject({ kid: newKid });
    expect((await client(server.url, after)("GET", "/whoami")).status).toBe(200);
    expect(provider.jwksFetches()).toBe(2);
    // The old key is still published: its tokens still verify, with no fetch.
    expect((await client(server.url, before)("GET", "/whoami")).status).toBe(200);

    const { privateKey } = await generateKeyPair("ES256");
    for (let i = 0; i < 5; i += 1) {
      const stray = await new SignJWT({ sub: "x", tenant: "acme" })
        .setProtectedHeader({ alg: "ES256", kid: `stray-${i}` })
        .setIssuer(provider.issuer)
        .setAudience(provider.audience)
        .setExpirationTime("1m")
        .sign(privateKey);
      const reply = await client(server.url, stray)("GET", "/whoami");
      expect(reply.body["error"]).toBe("token_unknown_key");
    }
    expect(provider.jwksFetches()).toBe(2);
  });
});

describe("GET /auth/config without an issuer", () => {
  it("answers oidc: null", async () => {
    const store = await sqliteBackend.create();
    const server = await startTestServer(store.store);
    try {
      const settings = await client(server.url, null)("GET", "/auth/config");
      expect(settings).toMatchObject({ status: 200, body: { oidc: null } });
    } finally {
      await server.close();
      await store.destroy();
    }
  });
});

describe("rein serve with --oidc-* flags", () => {
  let provider: TestProvider;
  let proc: Proc;
  let dir: string;

  beforeAll(async () => {
    provider = await startTestProvider({ clients: [CLIENTS[0]!] });
    dir = mkdtempSync(join(tmpdir(), "rein-oidc-"));
    proc = await launchRein(
      [
        "serve",
        ...["--db", join(dir, "rein.db"), "--graphs", TEST_GRAPHS, "--port", "0"],
        ...["--oidc-issuer", provider.issuer, "--oidc-audience", provider.audience],
        ...["--oidc-client-id", "rein-console", "--oidc-tenant-claim", "tenant"],
        ...["--oidc-groups-claim", "groups", "--log-level", "info"],
      ],
      /listening on (\S+)/,
    );
  }, 60_000);
  afterAll(async () => {
    proc?.child.kill("SIGKILL");
    await provider?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("accepts the issuer's tokens without a tokens file, tells the console how to sign in, and logs no token", async () => {
    const url = proc.url ?? "";
    const token = await provider.token("ci-bot");
    const me = await client(url, token)("GET", "/whoami");
    expect(me.body).toMatchObject({ subject: `${provider.issuer}#ci-bot`, groups: ["bots"] });
    const settings = await client(url, null)("GET", "/auth/config");
    expect(settings.body).toEqual({
      oidc: {
        issuer: provider.issuer,
        clientId: "rein-console",
        audience: provider.audience,
        scopes: ["openid", "profile", "email"],
      },
    });
    const bad = await client(url, `${token.slice(0, -4)}AAAA`)("GET", "/whoami");
    expect(bad.body["error"]).toBe("token_signature");
    expect((await client(url, null)("GET", "/whoami")).status).toBe(401);
    // The log line can reach the pipe after the response does.
    await vi.waitFor(() => expect(proc.out()).toContain('"code":"token_signature"'), {
      timeout: 5_000,
      interval: 25,
    });
    const [, payload, signature] = token.split(".");
    expect(proc.out() + proc.log()).not.toContain(payload!);
    expect(proc.out() + proc.log()).not.toContain(signature!);
  });
});
