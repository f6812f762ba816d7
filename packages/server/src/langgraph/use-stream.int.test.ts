/**
 * LangGraph's legacy React hook (`useStream` of `@langchain/langgraph-sdk/react`) in Debian's
 * Chromium, on a page served from another origin than Rein (CORS for a listed origin): it sends
 * a message, streams the agent to its approval, approves it with agent-chat-ui's decision, and
 * reopens a thread paused elsewhere, finding its question and answering it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { chromium, type Browser, type Page } from "playwright-core";
import { build } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  TOKENS,
  sqliteBackend,
  startTestServer,
  type TestServer,
  type TestStore,
} from "../testing/harness.ts";
import { langGraphGraphs } from "../testing/langgraph-graphs.ts";

const CHROMIUM = "/usr/bin/chromium";

/** Null when Chromium is installed; with `REIN_REQUIRE_BROWSER=1` a missing one is an error. */
function browserUnavailable(): string | null {
  if (existsSync(CHROMIUM)) return null;
  if (process.env["REIN_REQUIRE_BROWSER"] === "1")
    throw new Error(`${CHROMIUM} is missing, and REIN_REQUIRE_BROWSER=1.`);
  return `${CHROMIUM} is missing`;
}

const TYPES: Record<string, string> = {
  ".html": "text/html",
  ".js": "text/javascript",
  ".css": "text/css",
  ".map": "application/json",
};

/** Serves a built folder on a free loopback port (another origin than Rein's server). */
async function serveStatic(dir: string): Promise<{ server: Server; origin: string }> {
  const server = createHttpServer((request, response) => {
    const path = join(dir, new URL(request.url ?? "/", "http://x").pathname);
    if (!path.startsWith(dir) || !existsSync(path)) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-type": TYPES[extname(path)] ?? "application/octet-stream" });
    response.end(readFileSync(path));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const skip = browserUnavailable();

describe.skipIf(skip !== null)("useStream in Chromium against Rein's /langgraph", () => {
  let out: string;
  let site: { server: Server; origin: string };
  let store: TestStore;
  let rein: TestServer;
  let browser: Browser;
  const token = TOKENS["alice"]!.token;

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), "rein-use-stream-"));
    await build({
      configFile: false,
      root: fileURLToPath(new URL("./e2e/", import.meta.url)),
      base: "./",
      // The SDK's "use client" directives and zod's comments only make Rollup talk.
      logLevel: "error",
      build: { outDir: out, emptyOutDir: true, chunkSizeWarningLimit: 2000 },
    });
    site = await serveStatic(out);
    store = await sqliteBackend.create();
    rein = await startTestServer(store.store, {
      graphs: langGraphGraphs,
      corsOrigins: [site.origin],
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await rein?.close();
    await store?.destroy();
    site?.server.close();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  /** Opens the page against Rein, on a thread or a new one. */
  async function open(thread?: string): Promise<Page> {
    const page = await browser.newPage();
    const query = new URLSearchParams({ api: `${rein.url}/langgraph`, key: token });
    if (thread) query.set("thread", thread);
    await page.goto(`${site.origin}/index.html?${query.toString()}`);
    return page;
  }

  /** The message types the page shows, in order. */
  const types = (page: Page) =>
    page.$$eval("#messages li", (items) => items.map((li) => li.getAttribute("data-type")));

  it("sends, streams to the approval, approves and shows the tool's result", async () => {
    const page = await open();
    await page.click("#send");
    await page.waitForSelector("#approval", { timeout: 15_000 });
    expect(await page.textContent("#action")).toContain('refund {"order":"A-1","amount":50}');
    expect(await types(page)).toEqual(["human", "ai"]);
    const thread = await page.textContent("#thread");
    expect(thread).toMatch(/[0-9a-f-]{36}/);
    await page.click("#approve");
    await page.waitForFunction(() => document.querySelectorAll("#messages li").length === 4, null, {
      timeout: 15_000,
    });
    expect(await types(page)).toEqual(["human", "ai", "tool", "ai"]);
    expect(await page.textContent("#messages li:last-child")).toBe("Done: refunded 50 on A-1");
    expect(await page.$("#approval")).toBeNull();
    const client = new Client({ apiUrl: `${rein.url}/langgraph`, apiKey: token });
    expect((await client.threads.get(thread!)).status).toBe("idle");
    await page.close();
  });

  it("reopens a thread paused elsewhere, shows its question and answers it", async () => {
    const client = new Client({ apiUrl: `${rein.url}/langgraph`, apiKey: token });
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "refund-agent", {
      input: { messages: [{ type: "human", content: "Refund order A-1" }] },
    });
    const page = await open(thread.thread_id);
    await page.waitForSelector("#approval", { timeout: 15_000 });
    expect(await types(page)).toEqual(["human", "ai"]);
    await page.click("#approve");
    await page.waitForFunction(() => document.querySelectorAll("#messages li").length === 4, null, {
      timeout: 15_000,
    });
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
    await page.close();
  });
});
