/**
 * The thread screen as a reviewer reads it, in Chromium at 1280 px and on a 390 px phone: the run
 * tree says a paused sub-agent is paused and what it waits for, each run's conversation reads as
 * one (Human, AI, Tool, in the order the agent stored them), and the raw JSON is one toggle away.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { browserUnavailable, launchChromium, signIn } from "./e2e/browser.ts";
import { ConsoleErrors, expectAccessible, expectNoBrokenWords } from "./e2e/checks.ts";
import { DEMO, TOKENS, startConsoleFixture, type ConsoleFixture } from "./e2e/fixture.ts";

const unavailable = browserUnavailable();
if (unavailable) console.warn(`Skipping the thread screen tests: ${unavailable}.`);

const THREAD = "ticket-77";
const NOTE = "Pro rata: only one of the two mugs broke.";

describe.skipIf(unavailable !== null)("thread screen in Chromium", { timeout: 60_000 }, () => {
  let fixture: ConsoleFixture;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const consoleErrors = new ConsoleErrors();

  beforeAll(async () => {
    [fixture, browser] = await Promise.all([startConsoleFixture(), launchChromium()]);
    await fixture.pausedThread(THREAD);
    // The refund answered with an edit and a note, so it is done; the email still waits.
    const { items } = await fixture.alice.listInterrupts({ threadId: THREAD });
    const refund = items.find((i) => i.namespace[0] === DEMO.refund)!;
    await fixture.alice.resume(THREAD, {
      target: { runId: refund.runId, namespace: refund.namespace, interruptId: refund.id },
      resume: { type: "edit", args: { orderId: "1042", amount: 60, reason: "one mug broke" } },
      steering: NOTE,
      expectedCheckpointId: refund.checkpointId,
    });
  }, 120_000);
  afterAll(async () => {
    await Promise.all(contexts.map((c) => c.close()));
    await browser?.close();
    await fixture?.close();
  });

  async function threadPage(width: number): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 844 } });
    contexts.push(context);
    const page = consoleErrors.watch(await context.newPage());
    await signIn(page, fixture.url, TOKENS.alice.token);
    await page.goto(`${fixture.url}/#/threads/${THREAD}`);
    await page.getByRole("list", { name: "Run tree" }).waitFor();
    return page;
  }

  /** The run of the tree named `name` (its own line, not its children's). */
  const runItem = (page: Page, name: string) =>
    page
      .getByRole("list", { name: "Run tree" })
      .locator("li[data-run-id]")
      .filter({ has: page.locator("> .node-name", { hasText: new RegExp(`^${name}$`) }) });

  /** The message contents of a sub-agent, as the API stores them, oldest first. */
  async function storedMessages(sub: string): Promise<{ role: string; content: string }[]> {
    const state = await fixture.alice.getState(THREAD, { subgraphs: true });
    const child = state.subgraphs!.find((c) => c.namespace[0] === sub)!;
    return child.values["messages"] as { role: string; content: string }[];
  }

  async function expectNoSideways(page: Page, width: number): Promise<void> {
    const scroll = await page.evaluate(() => document.scrollingElement!.scrollWidth);
    expect(scroll, `page is ${scroll} px wide in a ${width} px window`).toBeLessThanOrEqual(width);
  }

  for (const width of [1280, 390]) {
    it(`at ${width} px: the run tree shows the paused sub-agent as paused and what it waits for`, async () => {
      const page = await threadPage(width);
      const email = runItem(page, DEMO.email);
      expect(await email.getAttribute("data-status")).toBe("interrupted");
      expect(await email.locator("> .status").textContent()).toBe("paused");
      expect(await email.locator("> .standing-line").textContent()).toBe(
        "Paused: waiting for an answer.",
      );
      const pending = page.getByRole("list", { name: `Pending on ${DEMO.email}` });
      expect(await pending.getByRole("listitem").textContent()).toMatch(
        /^Send email: to dana\.reyes@example\.com, subject Your order 1042/,
      );
      expect(await pending.getByRole("link", { name: `Answer at ${DEMO.node}` }).count()).toBe(1);
      const refund = runItem(page, DEMO.refund);
      expect(await refund.locator("> .status").textContent()).toBe("done");
      expect(await page.getByRole("list", { name: `Pending on ${DEMO.refund}` }).count()).toBe(0);
      const root = runItem(page, DEMO.name);
      expect(await root.locator("> .status").textContent()).toBe("paused");
      expect(await root.locator("> .standing-line").textContent()).toBe(
        "Paused: waiting for its sub-agent email.",
      );
      await expectNoSideways(page, width);
      await expectAccessible(page);
    });

    it(`at ${width} px: each conversation shows the agent's messages in order, as Human, AI and Tool`, async () => {
      const page = await threadPage(width);
      const email = page.getByRole("list", { name: `Conversation of ${DEMO.email}, oldest first` });
      const turns = email.getByRole("listitem");
      const stored = await storedMessages(DEMO.email);
      expect(await turns.count()).toBe(stored.length);
      expect(await turns.locator("> .speaker").allTextContents()).toEqual(["Human", "Human", "AI"]);
      const texts = await turns.locator("> p:not(.turn-note)").allTextContents();
      expect(texts).toEqual(stored.map((m) => m.content));
      expect(await turns.nth(2).locator(".call-action").textContent()).toBe("Calls Send email");

      // The refund's conversation: the tool ran with the reviewer's edit, then the note.
      const refund = page.getByRole("list", {
        name: `Conversation of ${DEMO.refund}, oldest first`,
      });
      const speakers = await refund.getByRole("listitem").locator("> .speaker").allTextContents();
      expect(speakers).toEqual([
        "Human",
        "Human",
        "AI",
        "Tool · issue_refund",
        "Steering · alice@acme",
        "AI",
      ]);
      const tool = refund.getByRole("listitem").nth(3);
      expect(await tool.locator(".turn-note").textContent()).toBe(
        "ran, edited by alice@acme: amount 120 → 60, reason arrived damaged → one mug broke",
      );
      expect(await refund.getByRole("listitem").nth(4).locator("> p").textContent()).toBe(NOTE);
      // The orchestrator's own values, in words.
      const rootState = page.getByRole("article", { name: /^support-desk/ });
      // Where each run is: the orchestrator waits at the email step only (the refund finished).
      expect(await rootState.locator(".hint").textContent()).toBe("Paused at: email");
      expect(
        await page
          .getByRole("article", { name: /^email/ })
          .locator(".hint")
          .textContent(),
      ).toBe("Paused at: tools");
      expect(await rootState.locator("dt").first().textContent()).toBe("Ticket");
      expect(await rootState.textContent()).toContain("Dispatchresearch, refund, email");
      await expectNoSideways(page, width);
      await expectAccessible(page);
      if (width === 1280) await expectNoBrokenWords(page);
    });

    it(`at ${width} px: the Raw JSON toggle shows the stored state as JSON and back`, async () => {
      const page = await threadPage(width);
      const toggle = page.getByRole("button", { name: "Raw JSON" });
      expect(await toggle.getAttribute("aria-pressed")).toBe("false");
      expect(await page.getByLabel("State values").count()).toBe(0);
      await toggle.click();
      expect(await toggle.getAttribute("aria-pressed")).toBe("true");
      const state = await fixture.alice.getState(THREAD, { subgraphs: true });
      const raw = JSON.parse((await page.getByLabel("State values").textContent())!) as unknown;
      expect(raw).toEqual(state.values);
      const emailRaw = JSON.parse(
        (await page.getByLabel(`State of ${DEMO.email}`).textContent())!,
      ) as unknown;
      expect(emailRaw).toEqual(state.subgraphs!.find((c) => c.namespace[0] === DEMO.email)!.values);
      // The readable view is replaced, not doubled; the run tree stays.
      expect(
        await page
          .getByRole("list", { name: `Conversation of ${DEMO.email}, oldest first` })
          .count(),
      ).toBe(0);
      expect(await runItem(page, DEMO.email).count()).toBe(1);
      await expectNoSideways(page, width);
      await expectAccessible(page);
      await toggle.click();
      expect(await page.getByLabel("State values").count()).toBe(0);
      await page
        .getByRole("list", { name: `Conversation of ${DEMO.email}, oldest first` })
        .waitFor();
    });
  }

  it("logged no console error on any page of the run", () => {
    expect(consoleErrors.errors).toEqual([]);
  });
});
