/**
 * The console on a queue of any size and on a server in open mode, in Chromium: 10,000 pending
 * questions page through with no cap and the count right, the deep page stays live, a
 * 200-character thread id breaks no word and squeezes nothing, and open mode has no sign-in.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { browserUnavailable, launchChromium } from "./e2e/browser.ts";
import { ConsoleErrors, expectAccessible, expectNoBrokenWords } from "./e2e/checks.ts";
import { startConsoleFixture, type ConsoleFixture } from "./e2e/fixture.ts";
import { seedPending } from "./e2e/seed.ts";

const unavailable = browserUnavailable();
const PENDING = 10_000;
const LONG_ID = `ticket-${"x".repeat(193)}`;

describe.skipIf(unavailable !== null)(
  "a queue of 10,000 in open mode",
  { timeout: 300_000 },
  () => {
    let fixture: ConsoleFixture;
    let browser: Browser;
    let context: BrowserContext;
    const consoleErrors = new ConsoleErrors();

    beforeAll(async () => {
      [fixture, browser] = await Promise.all([
        startConsoleFixture({ auth: "open", seed: (store) => seedPending(store, PENDING - 1) }),
        launchChromium(),
      ]);
      // The 10,000th: a real paused thread, with an id of 200 characters.
      await fixture.questionThread(LONG_ID);
      context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    }, 300_000);
    afterAll(async () => {
      await context?.close();
      await browser?.close();
      await fixture?.close();
    });

    // One page at a time: each holds live feeds, and a browser opens few connections per host.
    let last: Page | null = null;
    async function opened(): Promise<Page> {
      await last?.close();
      const page = consoleErrors.watch(await context.newPage());
      last = page;
      await page.goto(fixture.url);
      await page.getByRole("heading", { name: "Pending approvals" }).waitFor();
      return page;
    }
    const rows = (page: Page) =>
      page.getByRole("list", { name: "Pending interrupts, newest first" }).getByRole("listitem");

    it("opens on the queue without a sign-in screen, with nothing to sign out of", async () => {
      const page = await opened();
      expect(await page.getByLabel("Access token").count()).toBe(0);
      expect(await page.getByRole("button", { name: "Sign out" }).count()).toBe(0);
      expect(await page.getByLabel("Signed in as").textContent()).toContain("all (open mode)");
    });

    it("pages through all 10,000 by cursor with the count right, and the deep page stays live", async () => {
      const page = await opened();
      await page.getByText(`1–100 of 10,000 pending`).first().waitFor();
      const older = page.getByRole("navigation", { name: "Pages" }).getByRole("button", {
        name: "Older",
      });
      const seen = new Set<string>();
      const started = Date.now();
      for (let p = 0; ; p++) {
        const first = p * 100 + 1;
        await page
          .getByText(
            `${first.toLocaleString("en-US")}–${Math.min(first + 99, PENDING).toLocaleString("en-US")} of 10,000 pending`,
          )
          .first()
          .waitFor();
        const ids = await rows(page).evaluateAll((lis) =>
          lis.map((li) => li.getAttribute("data-interrupt-id") ?? ""),
        );
        expect(ids).toHaveLength(100);
        for (const id of ids) seen.add(id);
        if (!(await older.isEnabled())) break;
        await older.click();
      }
      console.log(`Paged 10,000 pending in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
      expect(seen.size).toBe(PENDING);
      // The oldest question is the first one seeded.
      expect(await rows(page).last().textContent()).toContain("Approve bulk item 1?");
      await expectAccessible(page);

      // A new question, and the deep page's count follows without a reload.
      await fixture.questionThread("question-live");
      await page.getByText("of 10,001 pending").first().waitFor({ timeout: 10_000 });
      expect(await rows(page).count()).toBe(100);
    });

    it("shows a 200-character thread id cut on one line, squeezing nothing and breaking no word", async () => {
      const page = await opened();
      // The older of the two questions (the other came in while paging).
      const row = rows(page).filter({ hasText: "Which warehouse ships the replacement?" }).last();
      await row.waitFor();
      await row.getByText("Ids", { exact: true }).click();
      const link = row.getByRole("link", { name: LONG_ID, exact: true });
      expect(await link.getAttribute("title")).toBe(LONG_ID);
      const box = (await link.boundingBox())!;
      const rowBox = (await row.boundingBox())!;
      expect(box.width).toBeLessThan(rowBox.width);
      expect(box.height).toBeLessThan(30);
      // The question itself keeps its width: one line, not a column of fragments.
      const ask = row.getByRole("link", { name: /^Which warehouse/ });
      expect((await ask.boundingBox())!.height).toBeLessThan(30);
      await expectNoBrokenWords(page);
      // The selected question's pane, with its ids opened, breaks no word either.
      await row.locator(".row-where").click();
      const pane = page.getByRole("complementary", { name: "Selected question" });
      await pane.getByRole("heading", { name: "Question", exact: true }).waitFor();
      await pane.getByText("Ids", { exact: true }).click();
      await expectNoBrokenWords(page);
      await expectAccessible(page);
      await page.goto(`${fixture.url}/#/threads/${LONG_ID}`);
      await page.getByRole("list", { name: "Run tree" }).waitFor();
      await expectNoBrokenWords(page);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        1280,
      );
    });

    it("logged no console error on any page of the run", () => {
      expect(consoleErrors.errors).toEqual([]);
    });
  },
);
