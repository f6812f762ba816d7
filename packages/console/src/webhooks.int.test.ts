/**
 * The webhooks screen in a real browser against a real server and real receivers: an admin sees
 * the tenant's subscriptions and, per subscription, each delivery with its attempts and the
 * receiver's answers (a failing receiver's HTTP 500, a working one's delivery); a reviewer without
 * the admin scope gets neither the link nor the log.
 */
import { execFileSync } from "node:child_process";
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { ReinClient } from "@rein/client";
import type { TokenConfig } from "@rein/server";
import { browserUnavailable, launchChromium, signIn } from "./e2e/browser.ts";
import { ConsoleErrors, expectAccessible, expectNoBrokenWords } from "./e2e/checks.ts";
import { TOKENS, startConsoleFixture, type ConsoleFixture } from "./e2e/fixture.ts";

const unavailable = browserUnavailable();
if (unavailable) console.warn(`Skipping the webhooks browser tests: ${unavailable}.`);

/** An admin of tenant acme, beside alice (a reviewer of acme without the admin scope). */
const ADA = {
  token: "ada-acme-admin-token-0007",
  subject: "ada@acme",
  tenant: "acme",
  scopes: ["read", "admin"],
} satisfies TokenConfig;

/** A receiver answering every request with `status`; counts what it got. */
async function receiver(
  status: number,
): Promise<{ url: string; hits: () => number; server: Server }> {
  let hits = 0;
  const server = createHttpServer((request, response) => {
    request.resume();
    request.on("end", () => {
      hits += 1;
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, hits: () => hits, server };
}

describe.skipIf(unavailable !== null)("webhooks in the console", { timeout: 120_000 }, () => {
  let fixture: ConsoleFixture;
  let browser: Browser;
  let failing: Awaited<ReturnType<typeof receiver>>;
  let working: Awaited<ReturnType<typeof receiver>>;
  const contexts: BrowserContext[] = [];
  const consoleErrors = new ConsoleErrors();

  beforeAll(async () => {
    [fixture, browser, failing, working] = await Promise.all([
      startConsoleFixture({ tokens: [TOKENS.alice, TOKENS.bob, ADA] }),
      launchChromium(),
      receiver(500),
      receiver(204),
    ]);
  }, 90_000);
  afterAll(async () => {
    await Promise.all(contexts.map((c) => c.close()));
    await browser?.close();
    await fixture?.close();
    failing?.server.close();
    working?.server.close();
  });

  async function signedIn(token: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    contexts.push(context);
    const page = consoleErrors.watch(await context.newPage());
    await signIn(page, fixture.url, token);
    return page;
  }

  it("with no subscriptions yet, the screen names a command the CLI has", async () => {
    const page = await signedIn(ADA.token);
    await page.getByRole("link", { name: "Webhooks" }).click();
    const hint = page.getByText("No subscriptions yet");
    await hint.waitFor();
    const command = await hint.locator("code").first().textContent();
    expect(command).toMatch(/^rein webhooks \w+$/);
    // The CLI's own usage lists the command with its argument.
    const bin = resolve(import.meta.dirname, "../../server/bin/rein.mjs");
    const usage = execFileSync(process.execPath, [bin, "--help"], { encoding: "utf8" });
    expect(usage).toContain(`${command} URL`);
    await expectAccessible(page);
  });

  it("an admin reads each subscription's deliveries: a failing receiver's answers, a working one's delivery", async () => {
    const ada = new ReinClient({ baseUrl: fixture.url, token: ADA.token });
    const bad = await ada.createWebhook({ url: failing.url, events: ["interrupt.pending"] });
    const good = await ada.createWebhook({ url: working.url, events: ["interrupt.pending"] });
    await fixture.pausedThread("hooked-1");
    // Both receivers were tried (the delivery loop polls each second).
    await expect
      .poll(() => failing.hits() > 0 && working.hits() > 0, { timeout: 20_000 })
      .toBe(true);

    const page = await signedIn(ADA.token);
    await page.getByRole("link", { name: "Webhooks" }).click();
    const subscriptions = page.getByRole("table", { name: "Subscriptions" });
    await subscriptions.waitFor();
    expect(await subscriptions.getByRole("link").allTextContents()).toEqual(
      expect.arrayContaining([failing.url, working.url]),
    );
    await expectAccessible(page);

    await subscriptions.getByRole("link", { name: failing.url }).click();
    expect(page.url()).toContain(`#/webhooks/${bad.id}`);
    const log = page.getByRole("table", { name: "Deliveries, newest first" });
    await expect.poll(() => log.textContent(), { timeout: 10_000 }).toContain("HTTP 500");
    const failed = await log.textContent();
    expect(failed).toContain("interrupt.pending");
    expect(failed).toMatch(/pending \(\d+ failed\)/);
    await expectAccessible(page);
    await expectNoBrokenWords(page);

    await page.getByRole("link", { name: working.url }).click();
    await expect.poll(() => log.textContent(), { timeout: 10_000 }).toContain("delivered");
    expect(page.url()).toContain(`#/webhooks/${good.id}`);
    expect(await log.textContent()).toContain("HTTP 204");
    expect(consoleErrors.errors).toEqual([]);
  });

  it("a reviewer without the admin scope has no webhooks link, and the screen says who may see it", async () => {
    const page = await signedIn(TOKENS.alice.token);
    expect(
      await page.getByRole("navigation", { name: "Main" }).getByRole("link").allTextContents(),
    ).toEqual(["Queue"]);
    await page.goto(`${fixture.url}/#/webhooks`);
    await page.getByText("Webhooks need a token with the admin scope").waitFor();
    expect(await page.getByRole("table", { name: "Subscriptions" }).count()).toBe(0);
  });
});
