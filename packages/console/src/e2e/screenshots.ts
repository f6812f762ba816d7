/**
 * Saves screenshots of the queue, the decision screen, the thread screen (wide and on a phone),
 * four eyes and a bulk selection into the repo's `docs/` (PNG), from a real server and Debian's Chromium:
 * `npm run screenshots -w @rein/console`.
 */
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { ReinClient } from "@rein/client";
import type { TokenConfig } from "@rein/server";
import { browserUnavailable, launchChromium, signIn } from "./browser.ts";
import { DEMO, TOKENS, startConsoleFixture, type ConsoleFixture } from "./fixture.ts";

const docs = join(dirname(fileURLToPath(import.meta.url)), "../../../../docs");

/** Alice approves for finance; carol (finance too) starts the refund that needs two approvers. */
const CAROL = {
  token: "carol-screenshot-token-01",
  subject: "carol@acme",
  tenant: "acme",
  scopes: ["read", "run", "resume"],
  groups: ["finance"],
} satisfies TokenConfig;
const PEOPLE: TokenConfig[] = [{ ...TOKENS.alice, groups: ["finance"] }, CAROL];

async function signedIn(
  browser: Browser,
  url: string,
  width: number,
  height: number,
): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  await signIn(page, url, TOKENS.alice.token);
  return page;
}

async function main(): Promise<void> {
  const unavailable = browserUnavailable();
  if (unavailable) throw new Error(`Cannot take screenshots: ${unavailable}.`);
  mkdirSync(docs, { recursive: true });
  const fixture = await startConsoleFixture({ tokens: PEOPLE });
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
    await page.getByRole("list", { name: "Conversation of refund, oldest first" }).waitFor();
    await page.getByRole("list", { name: "Steering notes" }).waitFor();
    await page.screenshot({ path: join(docs, "console-thread.png"), fullPage: true });

    const phone = await signedIn(browser, fixture.url, 390, 844);
    await phone.locator("ol.queue > li").nth(2).waitFor();
    await phone.screenshot({ path: join(docs, "console-phone.png") });
    await phone.goto(`${fixture.url}/#/threads/ticket-1042`);
    await phone.getByRole("list", { name: "Conversation of email, oldest first" }).waitFor();
    await phone.screenshot({ path: join(docs, "console-phone-thread.png") });
    await phone.goto(`${fixture.url}/#/threads/ticket-1043/interrupts/${open.id}`);
    await phone.getByRole("heading", { name: "Why the agent asks" }).waitFor();
    await phone.screenshot({ path: join(docs, "console-phone-decision.png"), fullPage: true });
    await governance(browser, fixture);
    console.log(
      `Saved console-{queue,decision,thread,phone,phone-thread,phone-decision,four-eyes,bulk}.png in ${docs}`,
    );
  } finally {
    await browser.close();
    await fixture.close();
  }
}

/**
 * Four eyes (a $1,500 refund after alice's approval: 1 of 2, her Accept held) and a bulk
 * selection of the pending emails with its action bar.
 */
async function governance(browser: Browser, fixture: ConsoleFixture): Promise<void> {
  const carol = new ReinClient({ baseUrl: fixture.url, token: CAROL.token });
  await carol.createThread({ graph: "governed", threadId: "refund-2001" });
  await carol.startRun("refund-2001", { input: { amount: 1500 }, wait: true });
  const [big] = (await fixture.alice.listInterrupts({ threadId: "refund-2001" })).items;
  await fixture.alice.resume("refund-2001", {
    target: { runId: big!.runId, namespace: big!.namespace, interruptId: big!.id },
    resume: { type: "accept" },
  });
  const page = await signedIn(browser, fixture.url, 1280, 800);
  await page.goto(`${fixture.url}/#/threads/refund-2001/interrupts/${big!.id}`);
  await page.getByRole("note").waitFor();
  await page.screenshot({ path: join(docs, "console-four-eyes.png"), fullPage: true });

  await page.goto(fixture.url);
  await page.getByRole("searchbox", { name: "Sub-agent graph" }).fill(DEMO.emailGraph);
  await page.getByRole("checkbox", { name: /^Select all on this page/ }).check();
  await page.getByRole("group", { name: "Decide the selected questions" }).waitFor();
  await page.screenshot({ path: join(docs, "console-bulk.png") });
}

await main();
