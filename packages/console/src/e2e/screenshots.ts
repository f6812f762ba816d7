/**
 * Saves screenshots of the queue, the decision screen and the thread screen into the repo's
 * `docs/` (PNG), from a real server and Debian's Chromium: `npm run screenshots -w @rein/console`.
 */
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { browserUnavailable, launchChromium } from "./browser.ts";
import { DEMO, TOKENS, startConsoleFixture } from "./fixture.ts";

const docs = join(dirname(fileURLToPath(import.meta.url)), "../../../../docs");

async function signedIn(
  browser: Browser,
  url: string,
  width: number,
  height: number,
): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  await page.goto(url);
  await page.getByLabel("Access token").fill(TOKENS.alice.token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Pending approvals" }).waitFor();
  return page;
}

async function main(): Promise<void> {
  const unavailable = browserUnavailable();
  if (unavailable) throw new Error(`Cannot take screenshots: ${unavailable}.`);
  mkdirSync(docs, { recursive: true });
  const fixture = await startConsoleFixture();
  const browser = await launchChromium();
  try {
    await fixture.pausedThread("ticket-1042");
    await fixture.pausedThread("ticket-1043");
    // One thread further along, so the thread screen shows a done sub-agent and steering.
    const first = await fixture.alice.listInterrupts({ threadId: "ticket-1042" });
    const refund = first.items.find((i) => i.namespace[0] === DEMO.refund)!;
    await fixture.alice.resume("ticket-1042", {
      target: { runId: refund.runId, namespace: refund.namespace, interruptId: refund.id },
      resume: {
        type: "edit",
        args: { orderId: "1042", amount: 60, reason: "one of two mugs broke" },
      },
      steering: "Pro rata: only one of the two mugs broke.",
      expectedCheckpointId: refund.checkpointId,
    });

    const page = await signedIn(browser, fixture.url, 1280, 800);
    await page.locator("ol.queue > li").nth(2).waitFor();
    // The refund selected: the split view shows it with the ticket and the research finding.
    await page
      .locator("ol.queue > li")
      .filter({ hasText: "Issue refund" })
      .first()
      .locator(".row-where")
      .click();
    await page
      .getByRole("complementary", { name: "Selected question" })
      .getByRole("heading", { name: "Why the agent asks" })
      .waitFor();
    await page.screenshot({ path: join(docs, "console-queue.png") });

    const pending = await fixture.alice.listInterrupts({ threadId: "ticket-1043" });
    const open = pending.items.find((i) => i.namespace[0] === DEMO.refund)!;
    await page.goto(`${fixture.url}/#/threads/ticket-1043/interrupts/${open.id}`);
    await page.getByRole("heading", { name: "Why the agent asks" }).waitFor();
    await page.getByRole("button", { name: "Edit arguments" }).click();
    await page.getByLabel("amount", { exact: true }).fill("60");
    await page.getByLabel("Steering note").fill("Pro rata: only one of the two mugs broke.");
    await page.screenshot({ path: join(docs, "console-decision.png"), fullPage: true });

    await page.goto(`${fixture.url}/#/threads/ticket-1042`);
    await page.getByRole("list", { name: "Steering notes" }).waitFor();
    await page.screenshot({ path: join(docs, "console-thread.png"), fullPage: true });

    const phone = await signedIn(browser, fixture.url, 390, 844);
    await phone.locator("ol.queue > li").nth(2).waitFor();
    await phone.screenshot({ path: join(docs, "console-phone.png") });
    await phone.goto(`${fixture.url}/#/threads/ticket-1043/interrupts/${open.id}`);
    await phone.getByRole("heading", { name: "Why the agent asks" }).waitFor();
    await phone.screenshot({ path: join(docs, "console-phone-decision.png"), fullPage: true });
    console.log(`Saved console-{queue,decision,thread,phone,phone-decision}.png in ${docs}`);
  } finally {
    await browser.close();
    await fixture.close();
  }
}

await main();
