/**
 * The edges of the server: CORS is closed unless origins are listed, request logs are structured
 * JSON with request, thread and run ids and never contain a token, and the package's public
 * surface resolves.
 */
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import * as server from "./index.ts";
import {
  TOKENS,
  client,
  sqliteBackend,
  startTestServer,
  type TestServer,
  type TestStore,
} from "./testing/harness.ts";

describe("server edges", () => {
  let store: TestStore | null = null;
  let running: TestServer | null = null;
  afterEach(async () => {
    await running?.close();
    await store?.destroy();
    running = null;
    store = null;
  });

  it("sends no CORS headers by default, and answers preflights only for listed origins", async () => {
    store = await sqliteBackend.create();
    running = await startTestServer(store.store, { corsOrigins: ["https://console.example"] });
    const closed = await fetch(`${running.url}/healthz`, {
      headers: { origin: "https://evil.example" },
    });
    expect(closed.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await fetch(`${running.url}/threads`, {
      method: "OPTIONS",
      headers: { origin: "https://console.example", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://console.example");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("authorization");
    const evilPreflight = await fetch(`${running.url}/threads`, {
      method: "OPTIONS",
      headers: { origin: "https://evil.example" },
    });
    expect(evilPreflight.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("logs JSON lines with request, thread and run ids, and never the token", async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split("\n").filter(Boolean))
          lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    store = await sqliteBackend.create();
    running = await startTestServer(store.store, { logger: { level: "info", stream: sink } });
    const alice = client(running.url, TOKENS["alice"]!.token);
    await alice("POST", "/threads", { graph: "ask", threadId: "log-1" });
    const run = await alice<{ runId: string }>("POST", "/threads/log-1/runs", {
      input: {},
      wait: true,
    });
    const response = await alice("GET", "/threads/log-1", undefined, { "x-request-id": "req-42" });
    expect(response.headers.get("x-request-id")).toBe("req-42");
    const text = JSON.stringify(lines);
    expect(text).not.toContain(TOKENS["alice"]!.token);
    const started = lines.find((l) => l["msg"] === "run started");
    expect(started).toMatchObject({ threadId: "log-1", runId: run.body.runId });
    expect(typeof started?.["reqId"]).toBe("string");
    expect(lines.some((l) => l["reqId"] === "req-42")).toBe(true);
  });

  it("exports its public surface", () => {
    for (const name of [
      "createServer",
      "openAuth",
      "tokenAuth",
      "loadTokens",
      "statusByCode",
      "buildOpenApi",
      "openStore",
      "loadGraphModule",
      "GraphRegistry",
    ])
      expect(server[name as keyof typeof server], name).toBeDefined();
    expect(server.statusByCode["stale_target"]).toBe(409);
    expect(server.statusByCode["invalid_answer"]).toBe(422);
    expect(server.statusByCode["store_unavailable"]).toBe(503);
  });
});
