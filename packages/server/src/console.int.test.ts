/**
 * The console's assets at `/`: served from a built directory, with the API and its JSON 404s
 * unchanged around them.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  sqliteBackend,
  startTestServer,
  type TestServer,
  type TestStore,
} from "./testing/harness.ts";

describe("console assets", () => {
  let store: TestStore;
  let server: TestServer;
  let dir: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "rein-console-"));
    mkdirSync(join(dir, "assets"));
    writeFileSync(join(dir, "index.html"), "<!doctype html><title>Rein console</title>");
    writeFileSync(join(dir, "assets", "app-1234.js"), "console.log(1)");
    store = await sqliteBackend.create();
    server = await startTestServer(store.store, { consoleDir: dir });
  });
  afterEach(async () => {
    await server.close();
    await store.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves index.html at / (never cached) and hashed assets (cached for good)", async () => {
    const page = await fetch(`${server.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    expect(page.headers.get("cache-control")).toBe("no-cache");
    expect(await page.text()).toContain("Rein console");
    const asset = await fetch(`${server.url}/assets/app-1234.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toContain("immutable");
  });

  it("leaves the API and its JSON 404s as they were", async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const unknown = await fetch(`${server.url}/assets/missing.js`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: "not_found" });
    const noToken = await fetch(`${server.url}/interrupts`);
    expect(noToken.status).toBe(401);
  });

  it("serves no console when the directory holds no build", async () => {
    const empty = mkdtempSync(join(tmpdir(), "rein-console-empty-"));
    const bare = await startTestServer(store.store, { consoleDir: empty });
    try {
      expect((await fetch(`${bare.url}/`)).status).toBe(404);
    } finally {
      await bare.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
