/**
 * `@langchain/react` 1.x `useStream` in Chromium against `rein serve`: a page bundled (esbuild)
 * from `int/react-page/main.ts` starts the fan-out graph, shows both sub-agents' questions, and answers one;
 * the other sub-agent's node does not run again, its question stays on the page and pending.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { END, START, StateGraph, append, type Checkpointer } from "@rein/core";
import { chromium, type Browser } from "playwright-core";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { graphs } from "../../testing/graphs.ts";
import {
  TOKENS,
  client,
  sqliteBackend,
  startTestServer,
  type TestServer,
  type TestStore,
} from "../../testing/harness.ts";

const CHROMIUM = "/usr/bin/chromium";
const missing = existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing`;
if (missing && process.env["REIN_REQUIRE_BROWSER"] === "1")
  throw new Error(`${missing}, and REIN_REQUIRE_BROWSER=1.`);

const executions = new Map<string, number>();

function subAgent(store: Checkpointer, name: string) {
  return new StateGraph({ notes: append<string>() })
    .addNode("ask", (_s, ctx) => {
      executions.set(name, (executions.get(name) ?? 0) + 1);
      return { notes: `${name}: ${ctx.interrupt<string>({ question: `${name}?` })}` };
    })
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: store, name });
}

function fanout(store: Checkpointer) {
  return new StateGraph({ notes: append<string>() })
    .addNode("plan", () => ({ notes: "plan" }))
    .addNode("research", subAgent(store, "research"))
    .addNode("refund", subAgent(store, "refund"))
    .addEdge(START, "plan")
    .addEdge("plan", "research")
    .addEdge("plan", "refund")
    .addEdge("research", END)
    .addEdge("refund", END)
    .compile({ checkpointer: store, name: "fanout" });
}

describe.skipIf(missing !== null)("useStream of @langchain/react in Chromium", () => {
  const page = mkdtempSync(join(tmpdir(), "rein-usestream-"));
  let store: TestStore;
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    await build({
      entryPoints: [fileURLToPath(new URL("./int/react-page/main.ts", import.meta.url))],
      bundle: true,
      format: "esm",
      platform: "browser",
      outfile: join(page, "main.js"),
      define: { "process.env.NODE_ENV": '"production"' },
      logLevel: "error",
    });
    writeFileSync(
      join(page, "index.html"),
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>useStream</title></head>' +
        '<body><main id="root"></main><script type="module" src="/main.js"></script></body></html>',
    );
    store = await sqliteBackend.create();
    server = await startTestServer(store.store, {
      graphs: { ...graphs, fanout },
      consoleDir: page,
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await store?.destroy();
    rmSync(page, { recursive: true, force: true });
  });

  it("answers one of two parallel questions; the other sub-agent is not re-run and stays listed", async () => {
    const alice = client(server.url, TOKENS["alice"]!.token);
    expect((await alice("POST", "/threads", { graph: "fanout", threadId: "t-react" })).status).toBe(
      201,
    );
    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on("pageerror", (error) => errors.push(error.message));
    await tab.goto(`${server.url}/?thread=t-react&key=${TOKENS["alice"]!.token}`);
    await tab.click("#start");
    const questions = tab.locator("#questions li");
    await expect.poll(() => questions.count(), { timeout: 15_000 }).toBe(2);
    expect(executions.get("research")).toBe(1);
    expect(executions.get("refund")).toBe(1);

    await tab.click('#questions li[data-ns="research"] button');
    await expect.poll(() => executions.get("research"), { timeout: 15_000 }).toBe(2);
    await expect.poll(() => questions.count(), { timeout: 15_000 }).toBe(1);
    expect(await questions.first().getAttribute("data-ns")).toBe("refund");

    // Only the answered sub-agent ran again; the other one's question is still pending.
    expect(executions.get("research")).toBe(2);
    expect(executions.get("refund")).toBe(1);
    const thread = await alice<{ pendingInterrupts: { id: string; namespace: string[] }[] }>(
      "GET",
      "/threads/t-react",
    );
    expect(thread.body.pendingInterrupts.map((i) => i.namespace)).toEqual([["refund"]]);
    expect(await questions.first().getAttribute("data-id")).toBe(
      thread.body.pendingInterrupts[0]?.id,
    );

    // The step commits when its last task finishes: then the page shows both answers.
    await tab.click('#questions li[data-ns="refund"] button');
    await expect.poll(() => questions.count(), { timeout: 15_000 }).toBe(0);
    await expect
      .poll(() => tab.locator("#notes").textContent(), { timeout: 15_000 })
      .toContain("refund: yes");
    expect(await tab.locator("#notes").textContent()).toContain("research: yes");
    expect(executions.get("research")).toBe(2);
    expect(executions.get("refund")).toBe(2);
    expect(errors).toEqual([]);
    await tab.close();
  }, 60_000);
});
