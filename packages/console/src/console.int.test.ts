/**
 * The console end to end in a real browser (Debian's Chromium through playwright-core) against a
 * real server running the support-desk demo: sign-in, the live queue of parallel sub-agent approvals, editing and accepting with
 * a steering note, a stale screen's conflict, tenant isolation, the thread screen's run tree, and
 * an accessibility check on every screen.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { browserUnavailable, launchChromium, seriousA11yViolations } from "./e2e/browser.ts";
import { DEMO, TOKENS, startConsoleFixture, type ConsoleFixture } from "./e2e/fixture.ts";

const unavailable = browserUnavailable();
if (unavailable) console.warn(`Skipping the console browser tests: ${unavailable}.`);

describe.skipIf(unavailable !== null)("approval console in Chromium", { timeout: 60_000 }, () => {
  let fixture: ConsoleFixture;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    [fixture, browser] = await Promise.all([startConsoleFixture(), launchChromium()]);
    await fixture.pausedThread("ticket-1");
  }, 120_000);
  afterAll(async () => {
    await Promise.all(contexts.map((c) => c.close()));
    await browser?.close();
    await fixture?.close();
  });

  async function signedIn(token: string, viewport = { width: 1280, height: 800 }): Promise<Page> {
    const context = await browser.newContext({ viewport });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(fixture.url);
    await page.getByLabel("Access token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Pending approvals" }).waitFor();
    return page;
  }

  const rows = (page: Page) => page.locator("table.queue tbody tr");
  const rowOf = (page: Page, agent: string) =>
    rows(page).filter({ hasText: `${DEMO.name} › ${agent} › ${DEMO.node}` });

  async function expectAccessible(page: Page): Promise<void> {
    expect(await seriousA11yViolations(page)).toEqual([]);
  }

  it("has an accessibility check that catches a nameless control", async () => {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    await page.setContent('<main><button type="button"></button></main>');
    expect((await seriousA11yViolations(page)).map((v) => v.id)).toContain("button-name");
  });

  it("refuses a wrong token in words and signs in with a right one, naming subject and tenant", async () => {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(fixture.url);
    await expectAccessible(page);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect
      .poll(() => page.getByRole("alert").textContent())
      .toBe("Enter the access token you were given.");
    await page.getByLabel("Access token").fill("not-a-valid-token-000000");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect
      .poll(() => page.getByRole("alert").textContent())
      .toContain("The server did not accept this token");
    await page.getByLabel("Access token").fill(TOKENS.alice.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    const who = page.getByLabel("Signed in as");
    await expect.poll(() => who.textContent()).toContain("alice@acme");
    expect(await who.textContent()).toContain("tenant acme");
  });

  it("lists both parallel sub-agent approvals of one run, with where they sit in the run tree", async () => {
    const page = await signedIn(TOKENS.alice.token);
    await expect.poll(() => rows(page).count()).toBe(2);
    const pending = await fixture.alice.listInterrupts({ threadId: "ticket-1" });
    const refund = pending.items.find((i) => i.namespace[0] === DEMO.refund)!;
    const refundRow = rowOf(page, DEMO.refund);
    expect(await refundRow.count()).toBe(1);
    expect(await rowOf(page, DEMO.email).count()).toBe(1);
    const text = (await refundRow.textContent()) ?? "";
    expect(text).toContain("issue_refund(orderId=1042, amount=120, reason=arrived damaged)");
    expect(text).toContain("ticket-1");
    expect(await refundRow.getAttribute("data-interrupt-id")).toBe(refund.id);
    expect(await refundRow.locator('td[data-label="Checkpoint"]').getAttribute("title")).toBe(
      refund.checkpointId,
    );
    expect(await refundRow.locator('td[data-label="Sub-agent"]').getAttribute("title")).toBe(
      refund.subAgentId,
    );
    expect(await refundRow.locator('td[data-label="Task"]').getAttribute("title")).toBe(
      refund.taskId,
    );
    await expectAccessible(page);
  });

  it("edits the refund amount and accepts it with a steering note; the email stays pending; a stale screen is shown the conflict", async () => {
    const reviewer = await signedIn(TOKENS.alice.token);
    const stale = await signedIn(TOKENS.alice.token);
    await expect.poll(() => rows(reviewer).count()).toBe(2);
    await expect.poll(() => rows(stale).count()).toBe(2);
    // The second reviewer opens the refund decision and leaves it open.
    await rowOf(stale, DEMO.refund).getByRole("link").first().click();
    await stale.getByRole("button", { name: "Accept", exact: true }).waitFor();

    // The first reviewer moves to the refund row with j/k and opens it with Enter.
    const ids = await rows(reviewer).evaluateAll((trs) =>
      trs.map((tr) => tr.getAttribute("data-interrupt-id")),
    );
    const refundId = await rowOf(reviewer, DEMO.refund).getAttribute("data-interrupt-id");
    for (let i = 0; i < ids.indexOf(refundId); i++) await reviewer.keyboard.press("j");
    await expect
      .poll(() => rowOf(reviewer, DEMO.refund).getAttribute("aria-selected"))
      .toBe("true");
    await reviewer.keyboard.press("Enter");
    await reviewer.getByRole("heading", { name: "issue_refund" }).waitFor();
    await expectAccessible(reviewer);

    await reviewer.getByRole("button", { name: "Edit arguments" }).click();
    const amount = reviewer.getByLabel("amount", { exact: true });
    expect(await amount.inputValue()).toBe("120");
    // Invalid input is caught in the page and nothing is sent.
    await amount.fill("forty");
    await reviewer.getByRole("button", { name: "Accept with these arguments" }).click();
    await expect
      .poll(() => reviewer.getByRole("alert").textContent())
      .toContain("amount must be a number");
    expect(await amount.getAttribute("aria-invalid")).toBe("true");
    expect((await fixture.alice.listInterrupts({ threadId: "ticket-1" })).items).toHaveLength(2);

    await amount.fill("60");
    await reviewer.getByLabel("Steering note").fill("Pro rata: only one of the two mugs broke.");
    await reviewer.getByRole("button", { name: "Accept with these arguments" }).click();
    await expect
      .poll(() => reviewer.getByRole("status").first().textContent())
      .toContain("Edited arguments sent");
    expect(await reviewer.getByRole("status").first().textContent()).toContain(
      "1 question(s) still pending",
    );

    // The payment API paid the edited amount, once; the sub-agent heard the steering note.
    expect(fixture.ledger("ticket-1").map((e) => [e.orderId, e.amount, e.reason])).toEqual([
      ["1042", 60, "arrived damaged"],
    ]);
    const state = await fixture.alice.getState("ticket-1", { subgraphs: true });
    const refundChild = state.subgraphs?.find((c) => c.namespace[0] === DEMO.refund);
    expect(refundChild?.graph).toBe(DEMO.refundGraph);
    const said = JSON.stringify(refundChild?.values["messages"]);
    expect(said).toContain('"amount":60');
    expect(said).toContain("Reviewer guidance applied: Pro rata: only one of the two mugs broke.");
    const left = await fixture.alice.listInterrupts({ threadId: "ticket-1" });
    expect(left.items.map((i) => i.namespace[0])).toEqual([DEMO.email]);
    const audit = await fixture.alice.listAudit({ threadId: "ticket-1" });
    // The dispatch answer (set up by the fixture), then the refund answer and its steering note.
    expect(audit.items.map((a) => [a.action, a.actor])).toEqual([
      ["answer", "alice@acme"],
      ["answer", "alice@acme"],
      ["steer", "alice@acme"],
    ]);

    // The stale screen hears from the live feed that its question left the queue...
    await stale.getByText("This question left the queue since you opened it").waitFor();
    // ...and answers anyway: refused, shown what changed, and offered the latest state.
    await stale.getByRole("button", { name: "Accept", exact: true }).click();
    const conflict = stale.locator("section.conflict");
    await conflict.waitFor();
    expect(await conflict.textContent()).toContain("this screen was out of date");
    const thread = await fixture.alice.getThread("ticket-1");
    expect(await stale.getByTestId("conflict-run-status").textContent()).toBe("done");
    expect(await stale.getByTestId("conflict-head").textContent()).toMatch(/\S/);
    const pendingNow = conflict.getByRole("list", { name: "Pending now" }).getByRole("link");
    expect(await pendingNow.allTextContents()).toEqual([`${DEMO.email} › ${DEMO.node}`]);
    expect(thread.pendingInterrupts).toHaveLength(1);
    await expectAccessible(stale);
    // Nothing more was applied by the stale answer.
    expect((await fixture.alice.listAudit({ threadId: "ticket-1" })).items).toHaveLength(3);
    expect(fixture.ledger("ticket-1")).toHaveLength(1);

    await stale.getByRole("button", { name: "Decide again with the latest state" }).click();
    await stale.getByRole("heading", { name: "No longer pending" }).waitFor();
    await stale.getByRole("link", { name: `${DEMO.name} › ${DEMO.email} › ${DEMO.node}` }).click();
    await stale.getByRole("heading", { name: "send_email" }).waitFor();
    expect(await stale.getByRole("button", { name: "Accept", exact: true }).isEnabled()).toBe(true);

    // The reviewer's queue dropped the answered refund without a reload.
    await reviewer.goBack();
    await expect.poll(() => rows(reviewer).count()).toBe(1);
    expect(await rowOf(reviewer, DEMO.email).count()).toBe(1);
  });

  it("draws the thread's run tree with statuses, pending interrupts, history, steering and audit", async () => {
    const page = await signedIn(TOKENS.alice.token);
    await page.goto(`${fixture.url}/#/threads/ticket-1`);
    const tree = page.getByRole("list", { name: "Run tree" });
    await tree.waitFor();
    const status = (namespace: string) =>
      tree
        .locator("li[data-status]")
        .filter({ has: page.locator(`> .node-name`, { hasText: new RegExp(`^${namespace}$`) }) });
    await expect.poll(() => status(DEMO.name).getAttribute("data-status")).toBe("interrupted");
    expect(await status(DEMO.refund).getAttribute("data-status")).toBe("done");
    expect(await status("research").getAttribute("data-status")).toBe("done");
    expect(await status(DEMO.email).getAttribute("data-status")).toBe("interrupted");
    expect(
      await page
        .getByRole("list", { name: `Pending on ${DEMO.email}` })
        .getByRole("link")
        .count(),
    ).toBe(1);
    expect(await page.getByRole("list", { name: `Pending on ${DEMO.refund}` }).count()).toBe(0);
    expect(await page.getByRole("list", { name: "Steering notes" }).textContent()).toContain(
      "alice@acme: “Pro rata: only one of the two mugs broke.”",
    );
    const audit = page.getByRole("table", { name: "Audit log, oldest first" });
    expect(await audit.locator("tbody tr").count()).toBe(3);
    expect(await audit.textContent()).toContain("alice@acme");
    const history = await fixture.alice.getHistory("ticket-1", { limit: 50 });
    expect(
      await page.getByRole("list", { name: "Checkpoints, newest first" }).locator("li").count(),
    ).toBe(history.items.length);
    expect(await page.getByLabel("State values").textContent()).toContain("T-1042");
    // The demo's long state lines scroll inside their block; the page itself does not widen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      1280,
    );
    await expectAccessible(page);
  });

  it("updates the queue live when a new thread pauses, and accepts with the a key", async () => {
    const page = await signedIn(TOKENS.alice.token);
    await expect.poll(() => rows(page).count()).toBe(1);
    await fixture.pausedThread("ticket-2");
    await expect.poll(() => rows(page).count(), { timeout: 10_000 }).toBe(3);
    expect(await rows(page).filter({ hasText: "ticket-2" }).count()).toBe(2);

    // Filters: by thread, then by kind.
    await page.getByRole("searchbox", { name: "Thread" }).fill("ticket-1");
    await expect.poll(() => rows(page).count()).toBe(1);
    await page.getByRole("combobox", { name: "Kind" }).selectOption("question");
    await page.getByText("Nothing is waiting for a decision.").waitFor();
    await page.getByRole("combobox", { name: "Kind" }).selectOption("");
    await expect.poll(() => rows(page).count()).toBe(1);

    // `a` accepts the selected decision; the row leaves the queue.
    await page.locator("body").click({ position: { x: 5, y: 5 } });
    await page.keyboard.press("a");
    await expect
      .poll(() => page.getByRole("status").filter({ hasText: "Accepted" }).count())
      .toBe(1);
    await page.getByText("Nothing is waiting for a decision.").waitFor();
    expect((await fixture.alice.getThread("ticket-1")).status).toBe("done");
    // Accepting the email sent it: the outbox holds the demo's reply for this thread.
    const done = await fixture.alice.getState("ticket-1");
    expect(done.values["emailReport"]).toMatch(/^Email sent/);
  });

  it("answers a non-decision payload with a JSON editor checked against its answer schema", async () => {
    await fixture.questionThread("question-1");
    const page = await signedIn(TOKENS.alice.token);
    const row = rows(page).filter({ hasText: "question › ask" });
    await row.waitFor();
    expect(await row.textContent()).toContain("Which warehouse ships the replacement?");
    await row.getByRole("link").first().click();
    const editor = page.getByLabel("Answer (JSON)");
    await editor.waitFor();
    expect(JSON.parse(await editor.inputValue())).toEqual({ warehouse: "" });
    await expectAccessible(page);
    const send = page.getByRole("button", { name: "Send answer" });
    await editor.fill("{ warehouse: ");
    await send.click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("not valid JSON");
    await editor.fill('{ "warehouse": "X", "rush": true }');
    await send.click();
    await expect
      .poll(() => page.getByRole("alert").textContent())
      .toContain("warehouse must have at least 2 characters");
    expect(await page.getByRole("alert").textContent()).toContain("rush is not expected");
    expect((await fixture.alice.getThread("question-1")).status).toBe("interrupted");
    await editor.fill('{ "warehouse": "Lyon" }');
    await send.click();
    await expect
      .poll(() => page.getByRole("status").first().textContent())
      .toContain("Answer sent");
    const done = await fixture.alice.getState("question-1");
    expect(done.values["answer"]).toBe("Lyon");
  });

  it("shows another tenant an empty queue", async () => {
    const page = await signedIn(TOKENS.bob.token);
    await page.getByText("Nothing is waiting for a decision.").waitFor();
    expect(await rows(page).count()).toBe(0);
    expect(await page.getByLabel("Signed in as").textContent()).toContain("tenant globex");
    await page.goto(`${fixture.url}/#/threads/ticket-1`);
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("another tenant");
  });

  it("stays usable and accessible at phone width", async () => {
    const page = await signedIn(TOKENS.alice.token, { width: 390, height: 844 });
    await expect.poll(() => rows(page).count()).toBe(2);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(390);
    await expectAccessible(page);
    await rowOf(page, DEMO.refund).getByRole("link").first().click();
    await page.getByRole("button", { name: "Accept", exact: true }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      390,
    );
    await expectAccessible(page);
  });
});
