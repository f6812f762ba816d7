/**
 * The console's layout as a reviewer meets it in Chromium at 1280/1366 px and on a 390 px phone:
 * a long id never widens a page (one line, cut, whole in its tooltip, with a Copy button), the
 * split view leads with what is decided, and the "sent" notice restates what was sent. Widths
 * and positions are measured, not assumed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { browserUnavailable, launchChromium, signIn } from "./e2e/browser.ts";
import { ConsoleErrors } from "./e2e/checks.ts";
import { DEMO, TOKENS, startConsoleFixture, type ConsoleFixture } from "./e2e/fixture.ts";

const unavailable = browserUnavailable();
if (unavailable) console.warn(`Skipping the console layout tests: ${unavailable}.`);

/** A 200-character thread id, as an integration may well choose. */
const LONG = `order-${"7f3a9c2e41".repeat(20)}`.slice(0, 200);

describe.skipIf(unavailable !== null)("console layout in Chromium", { timeout: 60_000 }, () => {
  let fixture: ConsoleFixture;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const consoleErrors = new ConsoleErrors();

  beforeAll(async () => {
    [fixture, browser] = await Promise.all([startConsoleFixture(), launchChromium()]);
    await fixture.pausedThread(LONG);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(contexts.map((c) => c.close()));
    await browser?.close();
    await fixture?.close();
  });

  async function signedIn(
    viewport: { width: number; height: number },
    options: { refusals?: boolean } = {},
  ): Promise<Page> {
    const context = await browser.newContext({ viewport });
    contexts.push(context);
    const page = consoleErrors.watch(await context.newPage(), options);
    await signIn(page, fixture.url, TOKENS.alice.token);
    return page;
  }

  async function pendingOf(sub: string) {
    const { items } = await fixture.alice.listInterrupts({ threadId: LONG });
    const item = items.find((i) => i.namespace[0] === sub);
    if (!item) throw new Error(`nothing pending for ${sub}`);
    return item;
  }

  /** Opens the decision page of the long thread's question asked by `sub`. */
  async function decisionPage(page: Page, sub: string, heading: string): Promise<void> {
    const item = await pendingOf(sub);
    const hash = `#/threads/${encodeURIComponent(LONG)}/interrupts/${encodeURIComponent(item.id)}`;
    await page.evaluate((h) => (window.location.hash = h), hash);
    await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
  }

  /** The page's width against the window's: nothing scrolls sideways. */
  const widths = (page: Page) =>
    page.evaluate(() => ({
      scroll: document.scrollingElement!.scrollWidth,
      window: window.innerWidth,
    }));

  async function expectNoSideways(page: Page): Promise<void> {
    const { scroll, window } = await widths(page);
    expect(scroll, `page is ${scroll} px wide in a ${window} px window`).toBeLessThanOrEqual(
      window,
    );
  }

  /** True when the element's text sits on one line (its box is under two line heights). */
  const oneLine = (locator: Locator) =>
    locator.evaluate((el) => {
      const style = getComputedStyle(el);
      const line =
        style.lineHeight === "normal"
          ? parseFloat(style.fontSize) * 1.2
          : parseFloat(style.lineHeight);
      return el.getBoundingClientRect().height < line * 1.5;
    });

  const rows = (page: Page) =>
    page.getByRole("list", { name: "Pending interrupts, newest first" }).getByRole("listitem");
  const pane = (page: Page) => page.getByRole("complementary", { name: "Selected question" });

  it("keeps a 200-character thread id on one line of the decision page at 1280 and 1366 px: no sideways scroll, the breadcrumb inside the window, the id whole in its tooltip and copyable", async () => {
    const page = await signedIn({ width: 1280, height: 800 });
    await decisionPage(page, DEMO.refund, "Issue refund");
    for (const width of [1280, 1366]) {
      await page.setViewportSize({ width, height: 800 });
      await expectNoSideways(page);
      const crumb = page.getByRole("link", { name: `Thread ${LONG}`, exact: true });
      expect(await crumb.getAttribute("title")).toBe(LONG);
      const box = (await crumb.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(width);
      expect(await oneLine(crumb)).toBe(true);
    }
    await page.getByText("Ids", { exact: true }).click();
    const copy = page.getByRole("button", { name: `Copy thread id ${LONG}` });
    expect(await copy.isVisible()).toBe(true);
    const copyBox = (await copy.boundingBox())!;
    expect(copyBox.x + copyBox.width).toBeLessThanOrEqual(1366);
    expect(await oneLine(page.getByTitle(LONG, { exact: true }).last())).toBe(true);
    await expectNoSideways(page);
  });

  it("opens the decision page's Ids on a 390 px phone without widening the page", async () => {
    const page = await signedIn({ width: 390, height: 844 });
    await decisionPage(page, DEMO.refund, "Issue refund");
    await expectNoSideways(page);
    await page.getByText("Ids", { exact: true }).click();
    await page.getByRole("button", { name: `Copy thread id ${LONG}` }).waitFor();
    await expectNoSideways(page);
    const crumb = page.getByRole("link", { name: `Thread ${LONG}`, exact: true });
    const box = (await crumb.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(390);
  });

  it("gives the queue's expanded Ids a Copy button for the thread id, the link on one line", async () => {
    const page = await signedIn({ width: 1280, height: 800 });
    await expect.poll(() => rows(page).count()).toBe(2);
    const row = rows(page).filter({ hasText: `${DEMO.name} › ${DEMO.refund} › ${DEMO.node}` });
    await row.getByText("Ids", { exact: true }).click();
    const copy = row.getByRole("button", { name: `Copy thread id ${LONG}` });
    expect(await copy.isVisible()).toBe(true);
    const link = row.getByRole("link", { name: LONG, exact: true });
    expect(await link.getAttribute("title")).toBe(LONG);
    expect(await oneLine(link)).toBe(true);
    const rowBox = (await row.boundingBox())!;
    const copyBox = (await copy.boundingBox())!;
    expect(copyBox.x + copyBox.width).toBeLessThanOrEqual(rowBox.x + rowBox.width);
    await expectNoSideways(page);
  });

  it("shows the conflict screen's two checkpoint ids on one line each at 1280 and 1366 px", async () => {
    const page = await signedIn({ width: 1280, height: 800 }, { refusals: true });
    await decisionPage(page, DEMO.email, "Send email");
    const email = await pendingOf(DEMO.email);
    // Someone else answers first; this screen's answer is refused with the latest state.
    await fixture.alice.resume(LONG, {
      target: { runId: email.runId, namespace: email.namespace, interruptId: email.id },
      resume: { type: "accept" },
    });
    await page.getByRole("button", { name: "Accept", exact: true }).click();
    const conflict = page.getByRole("alert").filter({ hasText: "this screen was out of date" });
    await conflict.waitFor();
    const head = (await fixture.alice.getThread(LONG)).headCheckpointId!;
    for (const width of [1280, 1366]) {
      await page.setViewportSize({ width, height: 800 });
      for (const id of [email.checkpointId, head]) {
        const shown = conflict.getByTitle(id, { exact: true });
        expect(await shown.count()).toBe(1);
        expect(await oneLine(shown)).toBe(true);
        expect(
          await conflict.getByRole("button", { name: new RegExp(`^Copy .* ${id}$`) }).count(),
        ).toBe(1);
      }
      await expectNoSideways(page);
    }
  });

  it("leads the split view's pane with the action, its amount and Accept, within a 1366×768 window without scrolling", async () => {
    const page = await signedIn({ width: 1366, height: 768 });
    await expect.poll(() => rows(page).count()).toBe(1);
    await rows(page).first().getByText(`${DEMO.name} › ${DEMO.refund} › ${DEMO.node}`).click();
    const decide = pane(page);
    await decide.getByRole("heading", { name: "Issue refund", exact: true }).waitFor();
    const accept = decide.getByRole("button", { name: "Accept", exact: true });
    const amount = decide
      .getByRole("table", { name: "Arguments the agent asks for" })
      .getByRole("cell", { name: "$120.00" });
    for (const shown of [accept, amount]) {
      const box = (await shown.boundingBox())!;
      expect(box.y + box.height).toBeLessThan(768);
    }
    // Nothing was scrolled to get there.
    expect(await page.evaluate(() => window.scrollY)).toBe(0);
    expect(await decide.evaluate((el) => el.scrollTop)).toBe(0);
    // The context and the note follow the decision.
    const context = decide.getByRole("region", { name: "Why the agent asks" });
    expect((await context.boundingBox())!.y).toBeGreaterThan((await accept.boundingBox())!.y);
  });

  it("restates what was sent in the notice: the refund's amount", async () => {
    const page = await signedIn({ width: 1366, height: 768 });
    await decisionPage(page, DEMO.refund, "Issue refund");
    await page.getByRole("button", { name: "Accept", exact: true }).click();
    await page.getByRole("button", { name: "Confirm: issue refund" }).click();
    const notice = page.getByRole("status").filter({ hasText: "sent for Issue refund" });
    await notice.waitFor();
    expect(await notice.textContent()).toContain("amount $120.00");
    expect(await notice.textContent()).toContain("orderId 1042");
  });

  it("logged no console error", () => {
    expect(consoleErrors.errors).toEqual([]);
  });
});
