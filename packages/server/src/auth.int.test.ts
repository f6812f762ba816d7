/**
 * Auth over real HTTP: tokens, scopes per route, tenant isolation (another tenant's objects do
 * not exist for you), the audit actor, and open mode.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Interrupt } from "@rein/core";
import { authenticate, openAuth, parseTokens, tokenAuth } from "./auth.ts";
import {
  TOKENS,
  client,
  snapshotStore,
  sqliteBackend,
  startTestServer,
  type TestServer,
  type TestStore,
} from "./testing/harness.ts";

type Json = Record<string, unknown>;

describe("bearer tokens and tenants over HTTP", () => {
  let store: TestStore;
  let server: TestServer;
  let interrupt: Interrupt;
  const as = (name: string) => client(server.url, TOKENS[name]!.token);

  beforeEach(async () => {
    store = await sqliteBackend.create();
    server = await startTestServer(store.store);
    await as("alice")("POST", "/threads", { graph: "desk", threadId: "acme-1" });
    const run = await as("alice")<{ interrupts: Interrupt[] }>("POST", "/threads/acme-1/runs", {
      input: {},
      wait: true,
    });
    interrupt = run.body.interrupts[0]!;
  });
  afterEach(async () => {
    await server.close();
    await store.destroy();
  });

  it("answers 401 without a token or with a wrong one, and the body never echoes the token", async () => {
    const none = await client(server.url, null)("GET", "/threads/acme-1");
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ error: "unauthorized" });
    const wrong = await client(server.url, "not-a-real-token-at-all")("GET", "/threads/acme-1");
    expect(wrong.status).toBe(401);
    expect(JSON.stringify(wrong.body)).not.toContain("not-a-real-token");
    const malformed = await client(server.url, null)("GET", "/threads/acme-1", undefined, {
      authorization: "Basic abc",
    });
    expect(malformed.status).toBe(401);
  });

  const scoped: [string, string, string, unknown, string][] = [
    ["reader", "POST", "/threads", { graph: "desk" }, "run"],
    ["reader", "POST", "/threads/acme-1/runs", { input: {} }, "run"],
    ["runner", "POST", "/threads/acme-1/resume", { resume: 1 }, "resume"],
    ["runner", "POST", "/threads/acme-1/runs", { command: { resume: 1 } }, "resume"],
    ["runner", "POST", "/threads/acme-1/steer", { text: "x" }, "resume"],
    ["alice", "DELETE", "/threads/acme-1", undefined, "admin"],
  ];
  it.each(scoped)(
    "%s gets 403 for %s %s (needs %s) and nothing changes",
    async (who, method, path, body, scope) => {
      const before = await snapshotStore(store.store);
      const r = await as(who)(method, path, body);
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ error: "forbidden", details: { scope } });
      expect(await snapshotStore(store.store)).toBe(before);
    },
  );

  it("lets the read scope read every read route", async () => {
    const reader = as("reader");
    for (const path of [
      "/threads",
      "/threads/acme-1",
      "/threads/acme-1/state",
      "/threads/acme-1/history",
      "/threads/acme-1/runs",
      "/interrupts",
      "/audit",
    ])
      expect((await reader("GET", path)).status, path).toBe(200);
  });

  it("hides another tenant's threads, runs, interrupts and audit: 404 or empty, never a hint", async () => {
    const bob = as("bob");
    const before = await snapshotStore(store.store);
    const paths: [string, string, unknown?][] = [
      ["GET", "/threads/acme-1"],
      ["GET", "/threads/acme-1/state"],
      ["GET", "/threads/acme-1/history"],
      ["GET", "/threads/acme-1/runs"],
      ["GET", `/threads/acme-1/runs/${interrupt.runId}`],
      ["GET", `/threads/acme-1/runs/${interrupt.runId}/stream`],
      ["POST", "/threads/acme-1/runs", { input: {} }],
      ["POST", "/threads/acme-1/runs/stream", { input: {} }],
      ["POST", "/threads/acme-1/resume", { resumeMap: { [interrupt.id]: { type: "accept" } } }],
      ["POST", "/threads/acme-1/steer", { text: "x" }],
      ["DELETE", "/threads/acme-1"],
      ["GET", "/audit?threadId=acme-1"],
    ];
    for (const [method, path, body] of paths) {
      const r = await bob(method, path, body);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body, `${method} ${path}`).toMatchObject({ error: "not_found" });
    }
    expect((await bob<{ items: unknown[] }>("GET", "/interrupts")).body.items).toEqual([]);
    expect(
      (await bob<{ items: unknown[] }>("GET", "/interrupts?threadId=acme-1")).body.items,
    ).toEqual([]);
    expect((await bob<{ items: unknown[] }>("GET", "/threads")).body.items).toEqual([]);
    expect((await bob<{ items: unknown[] }>("GET", "/audit")).body.items).toEqual([]);
    expect(await snapshotStore(store.store)).toBe(before);
    // Bob's own thread is his alone.
    await bob("POST", "/threads", { graph: "ask", threadId: "globex-1" });
    expect((await as("alice")("GET", "/threads/globex-1")).status).toBe(404);
    expect(
      (await as("alice")<{ items: Json[] }>("GET", "/threads")).body.items.map(
        (t) => t["threadId"],
      ),
    ).toEqual(["acme-1"]);
  });

  it("records the token's subject as the actor of answers and steering", async () => {
    await as("alice")("POST", "/threads/acme-1/steer", {
      target: { runId: interrupt.runId, namespace: interrupt.namespace },
      text: "be brief",
    });
    await as("admin")("POST", "/threads/acme-1/resume", {
      target: { runId: interrupt.runId, namespace: interrupt.namespace },
      resume: { type: "accept" },
    });
    const audit = await as("reader")<{ items: Json[] }>("GET", "/audit");
    expect(audit.body.items.map((a) => [a["action"], a["actor"]])).toEqual([
      ["steer", "alice@acme"],
      ["answer", "root@acme"],
    ]);
  });
});

describe("token configuration", () => {
  it("parses the file shape and the bare array, and refuses short tokens without echoing them", () => {
    const text = JSON.stringify({ tokens: [TOKENS["alice"]] });
    expect(parseTokens(text, "tokens.json")).toEqual([TOKENS["alice"]]);
    expect(parseTokens(JSON.stringify([TOKENS["bob"]]), "env")).toEqual([TOKENS["bob"]]);
    const short = JSON.stringify([{ ...TOKENS["bob"], token: "s3cr3t" }]);
    expect(() => parseTokens(short, "tokens.json")).toThrow(/at least 16/);
    try {
      parseTokens(short, "tokens.json");
    } catch (error) {
      expect(String(error)).not.toContain("s3cr3t");
    }
    expect(() => parseTokens("{", "tokens.json")).toThrow(/not valid JSON/);
  });

  it("matches tokens exactly, and open mode acts as one local admin across tenants", async () => {
    const auth = tokenAuth([TOKENS["alice"]!, TOKENS["bob"]!]);
    expect((await authenticate(auth, `Bearer ${TOKENS["bob"]!.token}`)).subject).toBe("bob@globex");
    await expect(authenticate(auth, `Bearer ${TOKENS["bob"]!.token}x`)).rejects.toThrow(
      /not valid/,
    );
    await expect(authenticate(auth, `Bearer ${TOKENS["bob"]!.token.slice(0, -1)}`)).rejects.toThrow(
      /not valid/,
    );
    const open = await authenticate(openAuth(), undefined);
    expect(open).toMatchObject({ subject: "local", tenant: null });
    expect(open.scopes.has("admin")).toBe(true);
  });
});
