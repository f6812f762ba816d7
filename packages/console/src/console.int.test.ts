/**
 * The console end to end in a real browser (Debian's Chromium through playwright-core) against a
 * real server running the support-desk demo: sign-in, the inbox of parallel sub-agent approvals
 * with its split view, the context to decide on, edits that cannot misfire, irreversible actions,
 * steering the chosen run, a stale screen's conflict, filters by app and sub-agent, tenant
 * isolation, the thread screen — with axe, console errors and broken words checked throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { a11yViolations, browserUnavailable, launchChromium, signIn } from "./e2e/browser.ts";
import { ConsoleErrors, brokenWords, expectAccessible, expectNoBrokenWords } from "./e2e/checks.ts";
import { DEMO, TOKENS, startConsoleFixture, type ConsoleFixture } from "./e2e/fixture.ts";

const unavailable = browserUnavailable();
if (unavailable) console.warn(`Skipping the console browser tests: ${unavailable}.`);

describe.skipIf(unavailable !== null)("approval console in Chromium", { timeout: 60_000 }, () => {
  let fixture: ConsoleFixture;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const consoleErrors = new ConsoleErrors();

  beforeAll(async () => {
    [fixture, browser] = await Promise.all([startConsoleFixture(), launchChromium()]);
    await fixture.pausedThread("ticket-1");
  }, 120_000);
  afterAll(async () => {
    await Promise.all(contexts.map((c) => c.close()));
    await browser?.close();
    await fixture?.close();
  });

  async function newPage(
    viewport = { width: 1280, height: 800 },
    options: { refusals?: boolean } = {},
  ): Promise<Page> {
    const context = await browser.newContext({ viewport });
    contexts.push(context);
    return consoleErrors.watch(await context.newPage(), options);
  }

  async function signedIn(
    token: string,
    viewport = { width: 1280, height: 800 },
    options: { refusals?: boolean } = {},
  ): Promise<Page> {
    const page = await newPage(viewport, options);
    await signIn(page, fixture.url, token);
    return page;
  }

  const rows = (page: Page) =>
    page.getByRole("list", { name: "Pending interrupts, newest first" }).getByRole("listitem");
  const rowOf = (page: Page, agent: string) =>
    rows(page).filter({ hasText: `${DEMO.name} › ${agent} › ${DEMO.node}` });
  const pane = (page: Page) => page.getByRole("complementary", { name: "Selected question" });

  it("has an accessibility check that catches a nameless control", async () => {
    const page = await newPage();
    await page.setContent('<main><button type="button"></button></main>');
    expect((await a11yViolations(page)).map((v) => v.id)).toContain("button-name");
  });

  it("has a broken-word check that catches a word split across lines", async () => {
    const page = await newPage();
    await page.setContent(
      '<main><p style="width: 4rem; overflow-wrap: anywhere">supervisor checkpoint</p></main>',
    );
    expect((await brokenWords(page)).map((b) => b.word)).toContain("supervisor");
    await page.setContent('<main><p style="width: 40rem">supervisor checkpoint</p></main>');
    expect(await brokenWords(page)).toEqual([]);
  });

  it("refuses a wrong token in words and signs in with a right one, naming subject and tenant", async () => {
    const page = await newPage(undefined, { refusals: true });
    await page.goto(fixture.url);
    await page.getByLabel("Access token").waitFor();
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

  it("lists both parallel sub-agent approvals as an inbox: the action in words, the amount with its currency, where it comes from, the ids one toggle away", async () => {
    const page = await signedIn(TOKENS.alice.token);
    await expect.poll(() => rows(page).count()).toBe(2);
    expect(await page.getByText("1–2 of 2 pending").count()).toBe(1);
    const pending = await fixture.alice.listInterrupts({ threadId: "ticket-1" });
    const refund = pending.items.find((i) => i.namespace[0] === DEMO.refund)!;
    const refundRow = rowOf(page, DEMO.refund);
    expect(await refundRow.count()).toBe(1);
    expect(await rowOf(page, DEMO.email).count()).toBe(1);
    expect(await refundRow.getByRole("link", { name: /^Issue refund/ }).count()).toBe(1);
    const text = (await refundRow.textContent()) ?? "";
    expect(text).toContain("amount $120.00");
    expect(text).toContain("orderId 1042");
    expect(text).toContain("irreversible");
    // The ids the spec requires are on the row, behind a toggle, each whole in its tooltip.
    await refundRow.getByText("Ids", { exact: true }).click();
    for (const id of [refund.checkpointId, refund.taskId, refund.subAgentId!])
      expect(await refundRow.getByTitle(id, { exact: true }).isVisible()).toBe(true);
    expect(await refundRow.getByRole("link", { name: "ticket-1", exact: true }).count()).toBe(1);
    await refundRow
      .getByRole("button", { name: `Copy checkpoint id ${refund.checkpointId}` })
      .waitFor();
    await expectAccessible(page);
    await expectNoBrokenWords(page);
    await page.setViewportSize({ width: 1366, height: 800 });
    await expectNoBrokenWords(page);
  });

  it("filters by app to every question of its run tree, and by sub-agent graph to one", async () => {
    const page = await signedIn(TOKENS.alice.token);
    await expect.poll(() => rows(page).count()).toBe(2);
    await page.getByRole("combobox", { name: "App" }).selectOption(DEMO.name);
    await expect.poll(() => page.getByText("1–2 of 2 pending").count()).toBe(1);
    expect(await rows(page).count()).toBe(2);
    // The API agrees: the app is the root graph of the tree.
    const api = await fixture.alice.listInterrupts({ graph: DEMO.name });
    expect([api.items.length, api.total]).toEqual([2, 2]);
    await page.getByRole("searchbox", { name: "Sub-agent graph" }).fill(DEMO.refundGraph);
    await expect.poll(() => rows(page).count()).toBe(1);
    expect(await rowOf(page, DEMO.refund).count()).toBe(1);
    expect(await page.getByText("1–1 of 1 pending").count()).toBe(1);
    await page.getByRole("searchbox", { name: "Sub-agent graph" }).fill("");
    await page.getByRole("combobox", { name: "App" }).selectOption("question");
    await page.getByText("Nothing is waiting for a decision.").waitFor();
  });

  it("a first-time reviewer approves the refund with an edit and a note: context shown, no bare accept while editing, an explicit confirmation; a stale screen is shown the conflict", async () => {
    // The stale screen's answer is refused with a 409 on purpose.
    const stale = await signedIn(TOKENS.alice.token, undefined, { refusals: true });
    await expect.poll(() => rows(stale).count()).toBe(2);
    await rowOf(stale, DEMO.refund)
      .getByRole("link", { name: /^Issue refund/ })
      .click();
    await stale.getByRole("heading", { name: "Issue refund", level: 1 }).waitFor();

    // The timed flow: from opening the console to the refund approved with an edit and a note.
    const started = Date.now();
    let clicks = 0;
    const reviewer = await newPage();
    await reviewer.goto(fixture.url);
    await reviewer.getByLabel("Access token").fill(TOKENS.alice.token);
    await reviewer.getByRole("button", { name: "Sign in" }).click();
    clicks += 1;
    await expect.poll(() => rows(reviewer).count()).toBe(2);
    // j/k move the selection; the split view shows the selected question beside the list.
    const ids = await rows(reviewer).evaluateAll((lis) =>
      lis.map((li) => li.getAttribute("data-interrupt-id")),
    );
    const refundId = await rowOf(reviewer, DEMO.refund).getAttribute("data-interrupt-id");
    for (let i = 0; i < ids.indexOf(refundId); i++) await reviewer.keyboard.press("j");
    clicks += ids.indexOf(refundId);
    await expect.poll(() => rowOf(reviewer, DEMO.refund).getAttribute("aria-current")).toBe("true");
    const decide = pane(reviewer);
    await decide.getByRole("heading", { name: "Issue refund", exact: true }).waitFor();

    // The context to decide on: the ticket and the research finding, above the arguments.
    const context = decide.getByRole("region", { name: "Why the agent asks" });
    const conversation = context.getByRole("list", {
      name: "What the agent was told, oldest first",
    });
    await conversation.waitFor();
    expect(await conversation.textContent()).toContain("Ticket T-1042 from Dana Reyes");
    expect(await conversation.textContent()).toContain("pro rata is $60, a full refund $120");
    // Each message is labelled by what it is: the request that briefed the agent, the finding.
    const speakers = await conversation
      .getByRole("listitem")
      .evaluateAll((lis) => lis.map((li) => li.querySelector(".speaker")?.textContent));
    expect(speakers).toEqual(["Request", "Research finding"]);
    expect(await context.textContent()).toContain("I propose a full refund");
    await expectAccessible(reviewer);
    await expectNoBrokenWords(reviewer);

    await decide.getByRole("button", { name: "Edit arguments" }).click();
    clicks += 1;
    // In edit mode there is one accept: the one that sends the edited arguments.
    expect(await decide.getByRole("button", { name: "Accept", exact: true }).count()).toBe(0);
    expect(await decide.getByRole("button", { name: /^Accept/ }).allTextContents()).toEqual([
      "Accept with these arguments",
    ]);
    const amount = decide.getByLabel("amount", { exact: true });
    expect(await amount.inputValue()).toBe("120");
    await amount.fill("forty");
    clicks += 1;
    await decide.getByRole("button", { name: "Accept with these arguments" }).click();
    clicks += 1;
    await expect
      .poll(() => decide.getByRole("alert").textContent())
      .toContain("amount must be a number");
    expect(await amount.getAttribute("aria-invalid")).toBe("true");
    // The message goes as soon as the value is valid, before any submit.
    await amount.fill("60");
    await expect.poll(() => decide.getByRole("alert").count()).toBe(0);
    expect(await amount.getAttribute("aria-invalid")).toBeNull();
    const changed = decide.getByRole("list", { name: "Changed arguments" });
    expect(await changed.textContent()).toBe("amount: $120.00 → $60.00");
    expect((await fixture.alice.listInterrupts({ threadId: "ticket-1" })).items).toHaveLength(2);

    // The steering box follows the decision and says who reads the note.
    const steering = decide.getByRole("region", { name: "Note for the agent" });
    expect(await steering.getByRole("radio", { name: /This sub-agent/ }).isChecked()).toBe(true);
    expect(await steering.textContent()).toContain("Read by refund (refund_agent)");
    await steering.getByLabel("Steering note").fill("Pro rata: only one of the two mugs broke.");
    clicks += 1;
    await decide.getByRole("button", { name: "Accept with these arguments" }).click();
    clicks += 1;
    // Irreversible: nothing is sent before the explicit confirmation.
    const confirm = decide.getByRole("group", { name: "This cannot be undone" });
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain("amount $60.00");
    expect(fixture.ledger("ticket-1")).toEqual([]);
    await expectAccessible(reviewer);
    await confirm.getByRole("button", { name: "Confirm: issue refund" }).click();
    clicks += 1;
    await reviewer.getByText("Edited arguments sent for Issue refund").first().waitFor();
    const seconds = (Date.now() - started) / 1000;
    console.log(
      `First-time reviewer flow (scripted): ${clicks} clicks and keys, ${seconds.toFixed(1)} s from opening the console to the refund approved with an edit and a note.`,
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
    expect(audit.items.map((a) => [a.action, a.actor])).toEqual([
      ["answer", "alice@acme"],
      ["answer", "alice@acme"],
      ["steer", "alice@acme"],
    ]);
    // The queue dropped the answered refund without a reload; the pane moved on to the email.
    await expect.poll(() => rows(reviewer).count()).toBe(1);
    await pane(reviewer).getByRole("heading", { name: "Send email", exact: true }).waitFor();

    // The stale screen hears from the live feed that its question left the queue...
    await stale.getByText("This question left the queue since you opened it").waitFor();
    // ...and answers anyway: refused, shown what changed, and offered the latest state.
    await stale.getByRole("button", { name: "Accept", exact: true }).click();
    await stale.getByRole("button", { name: "Confirm: issue refund" }).click();
    const conflict = stale.getByRole("alert").filter({ hasText: "this screen was out of date" });
    await conflict.waitFor();
    const thread = await fixture.alice.getThread("ticket-1");
    expect(await stale.getByTestId("conflict-run-status").textContent()).toBe("done");
    // The thread's head, as the thread screen shows it.
    expect(
      await stale.getByTestId("conflict-head").getByTitle(thread.headCheckpointId!).count(),
    ).toBe(1);
    const pendingNow = conflict.getByRole("list", { name: "Pending now" }).getByRole("link");
    expect(await pendingNow.allTextContents()).toEqual([`${DEMO.email} › ${DEMO.node}`]);
    await expectAccessible(stale);
    expect((await fixture.alice.listAudit({ threadId: "ticket-1" })).items).toHaveLength(3);
    expect(fixture.ledger("ticket-1")).toHaveLength(1);

    await stale.getByRole("button", { name: "Decide again with the latest state" }).click();
    await stale.getByRole("heading", { name: "No longer pending" }).waitFor();
    await stale.getByRole("link", { name: `${DEMO.name} › ${DEMO.email} › ${DEMO.node}` }).click();
    await stale.getByRole("heading", { name: "Send email", level: 1 }).waitFor();
    expect(await stale.getByRole("button", { name: "Accept", exact: true }).isEnabled()).toBe(true);
  });

  it("steers the run the reviewer chooses: a note for the orchestrator is recorded on the root run", async () => {
    const page = await signedIn(TOKENS.alice.token);
    const email = (await fixture.alice.listInterrupts({ threadId: "ticket-1" })).items[0]!;
    await page.goto(`${fixture.url}/#/threads/ticket-1/interrupts/${email.id}`);
    // A body with line breaks is edited in a text area that keeps them.
    await page.getByRole("button", { name: "Edit arguments" }).click();
    const body = page.getByLabel("body", { exact: true });
    expect(await body.evaluate((el) => el.tagName)).toBe("TEXTAREA");
    expect(await body.inputValue()).toContain("Hi Dana,\n\nSorry");
    await page.getByRole("button", { name: "Cancel editing" }).click();
    const steering = page.getByRole("region", { name: "Note for the agent" });
    await steering.getByRole("radio", { name: /orchestrator/ }).check();
    expect(await steering.textContent()).toContain(`Read by ${DEMO.name}`);
    // A note for a parent run reaches the runs below it too, and the box says so.
    expect(await steering.textContent()).toContain("also read by the runs below it");
    await steering.getByLabel("Steering note").fill("Close the ticket once the email is out.");
    await steering.getByRole("button", { name: "Steer without answering" }).click();
    await page.getByText(`Steering note recorded for ${DEMO.name}`).waitFor();
    const audit = await fixture.alice.listAudit({ threadId: "ticket-1" });
    const steer = audit.items.at(-1)!;
    expect([steer.action, steer.runId]).toEqual(["steer", email.path[0]!.runId]);
    expect(steer.runId).not.toBe(email.runId);
    // Nothing was answered.
    expect((await fixture.alice.listInterrupts({ threadId: "ticket-1" })).items).toHaveLength(1);
  });

  it("draws the thread's run tree with statuses, pending interrupts, history, steering and an audit naming each interrupt", async () => {
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
    expect(await audit.locator("tbody tr").count()).toBe(4);
    expect(await page.getByRole("status").filter({ hasText: "Audit chain" }).textContent()).toBe(
      "Audit chain verified: 4 entries",
    );
    const answers = await fixture.alice.listAudit({ threadId: "ticket-1" });
    const refundAnswer = answers.items[1]!;
    // The refund's answer and the note sent with it both name the refund's interrupt.
    expect(await audit.getByTitle(refundAnswer.interruptId!, { exact: true }).count()).toBe(2);
    const history = await fixture.alice.getHistory("ticket-1", { limit: 50 });
    expect(
      await page.getByRole("list", { name: "Checkpoints, newest first" }).locator("li").count(),
    ).toBe(history.items.length);
    // The state as stored is one toggle away.
    await page.getByRole("button", { name: "Raw JSON" }).click();
    expect(await page.getByLabel("State values").textContent()).toContain("T-1042");
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      1280,
    );
    await expectAccessible(page);
    await expectNoBrokenWords(page);
  });

  it("updates the queue live; a accepts a reversible decision and never an irreversible one", async () => {
    const page = await signedIn(TOKENS.alice.token);
    await expect.poll(() => rows(page).count()).toBe(1);
    await fixture.pausedThread("ticket-2");
    await expect.poll(() => rows(page).count(), { timeout: 10_000 }).toBe(3);
    expect(await page.getByText("1–3 of 3 pending").count()).toBe(1);

    // `a` on the irreversible refund does nothing but say why.
    await page.getByRole("searchbox", { name: "Thread" }).fill("ticket-2");
    await expect.poll(() => rows(page).count()).toBe(2);
    await rowOf(page, DEMO.refund).locator(".row-where").click();
    await page.locator("body").click({ position: { x: 5, y: 5 } });
    await expect.poll(() => rowOf(page, DEMO.refund).getAttribute("aria-current")).toBe("true");
    await page.keyboard.press("a");
    await expect
      .poll(() => page.getByRole("alert").first().textContent())
      .toContain("cannot be undone, so the a key does not accept it");
    expect((await fixture.alice.listInterrupts({ threadId: "ticket-2" })).items).toHaveLength(2);
    expect(fixture.ledger("ticket-2")).toEqual([]);

    // Filters: by thread, then by kind; `a` accepts the email, which leaves the queue.
    await page.getByRole("searchbox", { name: "Thread" }).fill("ticket-1");
    await expect.poll(() => rows(page).count()).toBe(1);
    await page.getByRole("combobox", { name: "Kind" }).selectOption("question");
    await page.getByText("Nothing is waiting for a decision.").waitFor();
    await page.getByRole("combobox", { name: "Kind" }).selectOption("");
    await expect.poll(() => rows(page).count()).toBe(1);
    await page.locator("body").click({ position: { x: 5, y: 5 } });
    await page.keyboard.press("a");
    await expect
      .poll(() => page.getByRole("status").filter({ hasText: "Accepted Send email" }).count())
      .toBe(1);
    await page.getByText("Nothing is waiting for a decision.").waitFor();
    expect((await fixture.alice.getThread("ticket-1")).status).toBe("done");
    const done = await fixture.alice.getState("ticket-1");
    expect(done.values["emailReport"]).toMatch(/^Email sent/);
  });

  it("shows a plain question as readable text and answers it with a JSON editor checked against its schema", async () => {
    await fixture.questionThread("question-1");
    const page = await signedIn(TOKENS.alice.token, { width: 900, height: 800 });
    const row = rows(page).filter({ hasText: "question › ask" });
    await row.waitFor();
    expect(await row.textContent()).toContain("Which warehouse ships the replacement?");
    await row.getByRole("link").first().click();
    const editor = page.getByLabel("Answer (JSON)");
    await editor.waitFor();
    // The question reads as a sentence, not as JSON scrolling sideways.
    expect(
      await page.getByText("Which warehouse ships the replacement?", { exact: true }).isVisible(),
    ).toBe(true);
    expect(await page.getByLabel("Payload").isVisible()).toBe(false);
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
    const page = await newPage(undefined, { refusals: true });
    await page.goto(fixture.url);
    await page.getByLabel("Access token").fill(TOKENS.bob.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("Nothing is waiting for a decision.").waitFor();
    expect(await rows(page).count()).toBe(0);
    expect(await page.getByLabel("Signed in as").textContent()).toContain("tenant globex");
    await page.goto(`${fixture.url}/#/threads/ticket-2`);
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("another tenant");
  });

  it("stays usable and accessible at phone width", async () => {
    const page = await signedIn(TOKENS.alice.token, { width: 390, height: 844 });
    await expect.poll(() => rows(page).count()).toBe(2);
    expect(await pane(page).count()).toBe(0);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(390);
    await expectAccessible(page);
    await rowOf(page, DEMO.refund)
      .getByRole("link", { name: /^Issue refund/ })
      .click();
    await page.getByRole("button", { name: "Accept", exact: true }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      390,
    );
    await expectAccessible(page);
  });

  it("says the thread's audit chain verifies, and after a manual UPDATE of one row names the entry", async () => {
    await fixture.pausedThread("audit-1");
    const page = await signedIn(TOKENS.alice.token);
    await page.goto(`${fixture.url}/#/threads/audit-1`);
    const verdict = page.locator(".chain");
    await verdict.waitFor();
    expect(await verdict.getAttribute("role")).toBe("status");
    expect(await verdict.textContent()).toBe("Audit chain verified: 1 entry");
    const [answer] = (await fixture.alice.listAudit({ threadId: "audit-1" })).items;
    fixture
      .sqlite!.db.prepare(
        "UPDATE audit SET record = replace(record, 'alice@acme', 'eve@acme') WHERE thread_id = ?",
      )
      .run("audit-1");
    await page.reload();
    const alert = page.getByRole("alert").filter({ hasText: "Audit chain broken" });
    await alert.waitFor();
    expect(await alert.textContent()).toBe(
      `Audit chain broken at entry 1 (record ${answer!.id}): its content was changed after it was written.`,
    );
    const audit = page.getByRole("table", { name: "Audit log, oldest first" });
    expect(await audit.locator("tr.broken").count()).toBe(1);
    expect(await audit.locator("tr.broken").textContent()).toContain("chain broken here");
    // The other threads' chains are untouched.
    expect((await fixture.alice.verifyAudit({ threadId: "ticket-1" })).ok).toBe(true);
    await expectAccessible(page);
  });

  it("logged no console error on any page of the run (a favicon included)", () => {
    expect(consoleErrors.errors).toEqual([]);
  });
});
