/**
 * API keys kept in the store, on SQLite and on Postgres: an admin creates one (shown once, only
 * its digest stored), it acts for its tenant with its scopes, its use is recorded, another tenant
 * neither sees nor revokes it, and a revoked or expired key is refused at once with its code. On
 * Postgres, two real `rein serve` processes share the store: a key revoked on one is refused by
 * the other on its next request.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
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
import { launchRein, TEST_GRAPHS, type Proc } from "./testing/processes.ts";

interface Created {
  id: string;
  key: string;
  tenant: string;
  scopes: string[];
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

const admin = (url: string) => client(url, TOKENS["admin"]!.token);

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`API keys on ${backend.name}`, () => {
    let store: TestStore;
    let server: TestServer;

    beforeEach(async () => {
      store = await backend.create();
      server = await startTestServer(store.store);
    });
    afterEach(async () => {
      await server.close();
      await store.destroy();
    });

    it("a created key acts for its tenant with its scopes; only its digest is stored; its use is recorded", async () => {
      const made = await admin(server.url)<Created>("POST", "/api-keys", {
        name: "nightly export",
        scopes: ["read", "run"],
      });
      expect(made.status).toBe(201);
      expect(made.body.key).toMatch(/^rein_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
      expect(made.body.key.startsWith(`${made.body.id}_`)).toBe(true);
      expect(made.body).toMatchObject({ tenant: "acme", scopes: ["read", "run"], revokedAt: null });

      const stored = await store.store.apiKeys.listApiKeys();
      expect(JSON.stringify(stored)).not.toContain(made.body.key.slice(made.body.id.length + 1));
      expect(stored[0]?.hash).toMatch(/^[0-9a-f]{64}$/);

      const machine = client(server.url, made.body.key);
      const me = await machine("GET", "/whoami");
      expect(me.body).toEqual({
        subject: `key:${made.body.id}`,
        tenant: "acme",
        scopes: ["read", "run"],
        groups: [],
        roles: [],
      });
      expect((await machine("POST", "/threads", { graph: "ask", threadId: "k-1" })).status).toBe(
        201,
      );
      // Its scopes bound it: no resume, no admin.
      expect((await machine("GET", "/api-keys")).status).toBe(403);

      const listed = await admin(server.url)<{ items: Created[] }>("GET", "/api-keys");
      expect(listed.body.items).toHaveLength(1);
      expect(listed.body.items[0]).not.toHaveProperty("key");
      expect(listed.body.items[0]).not.toHaveProperty("hash");
      expect(listed.body.items[0]!.lastUsedAt).not.toBeNull();
    });

    it("another tenant's admin neither sees nor revokes the key; a revoked key is refused at once and changes nothing", async () => {
      const made = await admin(server.url)<Created>("POST", "/api-keys", {
        name: "ci",
        scopes: ["read", "run", "resume"],
      });
      const bob = client(server.url, TOKENS["bob"]!.token);
      expect((await bob<{ items: unknown[] }>("GET", "/api-keys")).body.items).toEqual([]);
      expect((await bob("DELETE", `/api-keys/${made.body.id}`)).status).toBe(404);
      const machine = client(server.url, made.body.key);
      expect((await machine("GET", "/whoami")).status).toBe(200);

      const revoked = await admin(server.url)<Created>("DELETE", `/api-keys/${made.body.id}`);
      expect(revoked.status).toBe(200);
      expect(revoked.body.revokedAt).not.toBeNull();
      const before = await snapshotStore(store.store);
      const refused = await machine("POST", "/threads", { graph: "ask", threadId: "after" });
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({ error: "key_revoked" });
      expect(String(refused.body["message"])).toContain("ask an admin for a new one");
      expect(JSON.stringify(refused.body)).not.toContain(made.body.key);
      expect(await snapshotStore(store.store)).toBe(before);
    });

    it("an expired key is refused with key_expired; a key past expiry or with a scope the admin lacks is not created", async () => {
      const soon = new Date(Date.now() + 1500).toISOString();
      const made = await admin(server.url)<Created>("POST", "/api-keys", {
        name: "short",
        scopes: ["read"],
        expiresAt: soon,
      });
      expect(made.status).toBe(201);
      expect((await client(server.url, made.body.key)("GET", "/whoami")).status).toBe(200);
      await new Promise((r) => setTimeout(r, 1600));
      const expired = await client(server.url, made.body.key)("GET", "/whoami");
      expect(expired).toMatchObject({ status: 401, body: { error: "key_expired" } });

      const past = await admin(server.url)("POST", "/api-keys", {
        name: "past",
        scopes: ["read"],
        expiresAt: "2020-01-01T00:00:00Z",
      });
      expect(past.status).toBe(400);
      const metrics = await admin(server.url)("POST", "/api-keys", {
        name: "scraper",
        scopes: ["metrics"],
      });
      expect(metrics.status).toBe(400);
      const reader = await client(server.url, TOKENS["reader"]!.token)("POST", "/api-keys", {
        name: "mine",
        scopes: ["read"],
      });
      expect(reader.status).toBe(403);
      expect((await store.store.apiKeys.listApiKeys()).map((k) => k.name)).toEqual(["short"]);
    });

    it("an unknown key of the right shape is 401 unauthorized, never a 500", async () => {
      const fake = `rein_abcdefgh_${"A".repeat(43)}`;
      const reply = await client(server.url, fake)("GET", "/whoami");
      expect(reply).toMatchObject({ status: 401, body: { error: "unauthorized" } });
    });
  });
}

suite(sqliteBackend);
const postgres = await postgresBackend();
suite(postgres);

describe.skipIf(!postgres.available)("API keys across two server processes on Postgres", () => {
  let dir: string;
  let procs: Proc[] = [];
  let store: TestStore;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "rein-keys-"));
    writeFileSync(join(dir, "tokens.json"), JSON.stringify({ tokens: Object.values(TOKENS) }));
    store = await postgres.create();
    const schema = (store.store as unknown as { schema: string }).schema;
    procs = await Promise.all(
      [0, 1].map(() =>
        launchRein(
          [
            "serve",
            ...["--postgres", postgres.url, "--schema", schema, "--graphs", TEST_GRAPHS],
            ...["--tokens", join(dir, "tokens.json"), "--port", "0", "--log-level", "info"],
          ],
          /listening on (\S+)/,
        ),
      ),
    );
  }, 60_000);
  afterEach(async () => {
    for (const proc of procs) proc.child.kill("SIGKILL");
    await store.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a key revoked on one process is refused by the other within a second, and no log holds the key", async () => {
    const [a, b] = procs.map((p) => p.url ?? "");
    const made = await admin(a!)<Created>("POST", "/api-keys", { name: "ci", scopes: ["read"] });
    expect(made.status).toBe(201);
    const onB = client(b!, made.body.key);
    expect((await onB("GET", "/whoami")).status).toBe(200);

    expect((await admin(a!)("DELETE", `/api-keys/${made.body.id}`)).status).toBe(200);
    const revokedAt = Date.now();
    let refused = await onB("GET", "/whoami");
    while (refused.status === 200 && Date.now() - revokedAt < 1000)
      refused = await onB("GET", "/whoami");
    expect(refused).toMatchObject({ status: 401, body: { error: "key_revoked" } });
    expect(Date.now() - revokedAt).toBeLessThan(1000);

    // B logged the refusal by its code (the log line can reach the pipe after the response does);
    // neither process logged any part of the key's secret.
    await vi.waitFor(() => expect(procs[1]!.out()).toContain('"code":"key_revoked"'), {
      timeout: 5_000,
      interval: 25,
    });
    for (const proc of procs)
      expect(proc.out() + proc.log()).not.toContain(made.body.key.slice(14));
  }, 30_000);
});
