/**
 * Who may approve, in a real browser (Debian's Chromium through playwright-core) against a real
 * server: a refund over $1,000 that needs two approvers from finance, not the requester (four
 * eyes: "1 of 2: alice", alice's second approval refused, bob's applied, the requester refused,
 * someone outside finance told before clicking), and bulk decisions from the queue (all applied,
 * or none when one is refused, each refusal named) — with axe, console errors and broken words
 * checked throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { ReinClient, type InterruptListItem } from "@rein/client";
import type { TokenConfig } from "@rein/server";
import { browserUnavailable, launchChromium, signIn } from "./e2e/browser.ts";
import { ConsoleErrors, expectAccessible, expectNoBrokenWords } from "./e2e/checks.ts";
import { DEMO, TOKENS, startConsoleFixture, type ConsoleFixture } from "./e2e/fixture.ts";

const unavailable = browserUnavailable();
if (unavailable) console.warn(`Skipping the governance browser tests: ${unavailable}.`);

/** Four people of tenant acme: three in finance (carol starts the runs), dave in support. */
const PEOPLE = {
  alice: { ...TOKENS.alice, groups: ["finance"] },
  bob: {
    token: "bob-finance-token-000003",
    subject: "bob@acme",
    tenant: "acme",
    scopes: ["read", "run", "resume"],
    groups: ["finance"],
  },
  carol: {
    token: "carol-requester-token-04",
    subject: "carol@acme",
    tenant: "acme",
    scopes: ["read", "run", "resume"],
    groups: ["finance"],
  },
  dave: {
    token: "dave-support-token-00005",
    subject: "dave@acme",
    tenant: "acme",
    scopes: ["read", "run", "resume"],
    groups: ["support"],
  },
} satisfies Record<string, TokenConfig>;

describe.skipIf(unavailable !== null)("governance in the console", { timeout: 150_000 }, () => {
  let fixture: ConsoleFixture;
  let browser: Browser;
  let carol: ReinClient;
  const contexts: BrowserContext[] = [];
  const consoleErrors = new ConsoleErrors();

  beforeAll(async () => {
    [fixture, browser] = await Promise.all([
      startConsoleFixture({ tokens: Object.values(PEOPLE) }),
      launchChromium(),
    ]);
    carol = new ReinClient({ baseUrl: fixture.url, token: PEOPLE.carol.token });
  }, 120_000);
  afterAll(async () => {
    await Promise.all(contexts.map((c) => c.close()));
    await browser?.close();
    await fixture?.close();
  });

  /** A governed refund of `amount`, started by carol (its requester), paused on its question. */
  async function bigRefund(threadId: string, amount: number): Promise<InterruptListItem> {
    await carol.createThread({ graph: "governed", threadId });
    const asked = await carol.startRun(threadId, { input: { amount }, wait: true });
    expect(asked.status).toBe("interrupted");
    const [item] = (await fixture.alice.listInterrupts({ threadId })).items;
    return item!;
  }

  async function signedIn(
    token: string,
    options: { refusals?: boolean; width?: number } = {},
  ): Promise<Page> {
    const context = await browser.newContext({
      viewport: { width: options.width ?? 1280, height: 800 },
    });
    contexts.push(context);
    const page = consoleErrors.watch(await context.newPage(), options);
    await signIn(page, fixture.url, token);
    return page;
  }

  const rows = (page: Page) =>
    page.getByRole("list", { name: "Pending interrupts, newest first" }).getByRole("listitem");
  const approvalsOf = async (threadId: string) =>
    (await fixture.alice.listInterrupts({ threadId })).items[0]?.approval?.approvals.map(
      (a) => a.actor,
    );
  const progress = (page: Page) => page.getByTestId("approval-progress");

  /** Opens the question's own page and accepts it through the irreversible confirmation. */
  async function openAndAccept(page: Page, item: InterruptListItem): Promise<void> {
    await page.goto(`${fixture.url}/#/threads/${item.threadId}/interrupts/${item.id}`);
    await page.getByRole("button", { name: "Accept", exact: true }).click();
    await page.getByRole("button", { name: "Confirm: issue refund" }).click();
  }

  it("four eyes: 1 of 2 after alice, her second approval and the requester refused with the reason, bob's applies", async () => {
    const item = await bigRefund("big-1", 1500);
    expect(item.approval).toMatchObject({ required: 2, approvals: [] });

    // A screen alice opens now, before approving elsewhere: it will send a second approval.
    const aliceStale = await signedIn(PEOPLE.alice.token, { refusals: true });
    await aliceStale.goto(`${fixture.url}/#/threads/big-1/interrupts/${item.id}`);
    // It is at the confirmation when her approval lands elsewhere (a race the server settles).
    await aliceStale.getByRole("button", { name: "Accept", exact: true }).click();
    const staleConfirm = aliceStale.getByRole("button", { name: "Confirm: issue refund" });
    await staleConfirm.waitFor();

    // The queue says what the question needs before anyone approves.
    const queue = await signedIn(PEOPLE.bob.token);
    const row = rows(queue).filter({ hasText: "big-1" });
    await expect.poll(() => row.textContent()).toContain("needs 2 approvals");

    const alice = await signedIn(PEOPLE.alice.token);
    await alice.goto(`${fixture.url}/#/threads/big-1/interrupts/${item.id}`);
    const panel = alice.getByRole("region", { name: "Approvals" });
    await panel.waitFor();
    expect(await panel.textContent()).toContain(
      "this question needs 2 approvers from finance; not the requester.",
    );
    expect(await progress(alice).textContent()).toBe("0 of 2");
    await expectAccessible(alice);
    await openAndAccept(alice, item);
    await alice.getByText("Your approval of Issue refund is recorded (1 of 2: alice)").waitFor();
    expect(await progress(alice).textContent()).toBe("1 of 2: alice");
    // Her approve control is held back, and the note says why.
    const accept = alice.getByRole("button", { name: "Accept", exact: true });
    expect(await accept.isDisabled()).toBe(true);
    expect(await alice.getByRole("note").textContent()).toBe(
      "You approved; waiting for another approver.",
    );
    expect(await accept.getAttribute("aria-describedby")).toBe("approval-standing");
    await expectAccessible(alice);
    await expectNoBrokenWords(alice);
    expect(await approvalsOf("big-1")).toEqual(["alice@acme"]);
    expect((await fixture.alice.getThread("big-1")).status).toBe("interrupted");
    // The queue shows the partial approval, live.
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain("1 of 2: alice");

    // Alice's older screen confirms its approval: the server refuses, and the screen says why.
    await staleConfirm.click();
    const refusal = aliceStale.getByRole("alert").filter({ hasText: "Not allowed" });
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain("You approved this already");
    expect(await refusal.textContent()).toContain("Nothing was applied.");
    // ...and shows the state now: her approval counted once, her Accept held back.
    await expect.poll(() => progress(aliceStale).textContent()).toBe("1 of 2: alice");
    expect(await aliceStale.getByRole("button", { name: "Accept", exact: true }).isDisabled()).toBe(
      true,
    );
    await expectAccessible(aliceStale);
    expect(await approvalsOf("big-1")).toEqual(["alice@acme"]);

    // Carol started the run: finance or not, the requester may not approve.
    const requester = await signedIn(PEOPLE.carol.token, { refusals: true });
    await openAndAccept(requester, item);
    const refused = requester.getByRole("alert").filter({ hasText: "Not allowed" });
    await refused.waitFor();
    expect(await refused.textContent()).toContain("does not let the requester approve it");
    expect(await refused.textContent()).toContain("Nothing was applied.");
    expect(await approvalsOf("big-1")).toEqual(["alice@acme"]);

    // Dave is not in finance: told before he clicks, every answer held back.
    const dave = await signedIn(PEOPLE.dave.token);
    await dave.goto(`${fixture.url}/#/threads/big-1/interrupts/${item.id}`);
    await dave.getByRole("note").waitFor();
    expect(await dave.getByRole("note").textContent()).toContain(
      "You may not answer this: it needs 2 approvers from finance",
    );
    expect(await dave.getByRole("button", { name: "Accept", exact: true }).isDisabled()).toBe(true);
    expect(await dave.getByRole("button", { name: "Ignore", exact: true }).isDisabled()).toBe(true);
    await expectAccessible(dave);

    // Bob is the second approver: the refund applies.
    const bob = await signedIn(PEOPLE.bob.token);
    await bob.goto(`${fixture.url}/#/threads/big-1/interrupts/${item.id}`);
    await expect.poll(() => progress(bob).textContent()).toBe("1 of 2: alice");
    await openAndAccept(bob, item);
    await bob
      .getByText(/Acceptance sent for Issue refund \(amount \S*1,?500\b.*\) on thread big-1\./)
      .waitFor();
    const state = await fixture.alice.getState("big-1");
    expect(state.values["outcome"]).toBe("refunded 1500");
    expect((await fixture.alice.getThread("big-1")).status).toBe("done");
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(0);
  });

  it("a refund under the threshold needs no second approver", async () => {
    const item = await bigRefund("small-1", 300);
    expect(item.approval).toBeUndefined();
    const alice = await signedIn(PEOPLE.alice.token);
    await alice.goto(`${fixture.url}/#/threads/small-1/interrupts/${item.id}`);
    await alice.getByRole("button", { name: "Accept", exact: true }).waitFor();
    expect(await alice.getByRole("region", { name: "Approvals" }).count()).toBe(0);
    await openAndAccept(alice, item);
    await alice
      .getByText(/Acceptance sent for Issue refund \(amount \S*300\b.*\) on thread small-1\./)
      .waitFor();
    expect((await fixture.alice.getState("small-1")).values["outcome"]).toBe("refunded 300");
  });

  it("bulk: selects the pending emails with the keyboard and approves all of them at once", async () => {
    for (const id of ["mail-1", "mail-2", "mail-3"]) await fixture.pausedThread(id);
    const page = await signedIn(PEOPLE.alice.token);
    await page.getByRole("searchbox", { name: "Sub-agent graph" }).fill(DEMO.emailGraph);
    await expect.poll(() => rows(page).count()).toBe(3);
    // Keyboard: Tab to the select-all box and Space checks the whole page.
    const all = page.getByRole("checkbox", { name: "Select all on this page (3)" });
    await all.focus();
    await page.keyboard.press("Space");
    const bar = page.getByRole("group", { name: "Decide the selected questions" });
    await bar.getByText("3 selected").waitFor();
    await expectAccessible(page);
    await expectNoBrokenWords(page);
    // The emails can be undone: no confirmation, the decision goes at once.
    await bar.getByRole("button", { name: "Approve 3" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: "Approved 3 questions: all applied." })
      .waitFor();
    await page.getByText("Nothing is waiting for a decision.").waitFor();
    for (const id of ["mail-1", "mail-2", "mail-3"]) {
      const left = await fixture.alice.listInterrupts({ threadId: id });
      expect(left.items.map((i) => i.namespace[0])).toEqual([DEMO.refund]);
      // The email sub-agent ran on (in the background) and sent its email.
      await expect
        .poll(async () => {
          const runs = await fixture.alice.listRuns(id);
          return runs.items.find((r) => r.namespace[0] === DEMO.email)?.status;
        })
        .toBe("done");
    }
    const audit = await fixture.alice.listAudit({ threadId: "mail-2" });
    expect(audit.items.at(-1)).toMatchObject({ action: "answer", actor: "alice@acme" });
  });

  it("bulk: a selection with one question its policy refuses applies none, names it and why, and the rest goes once it is deselected", async () => {
    for (const id of ["mail-4", "mail-5"]) await fixture.pausedThread(id);
    const big = await bigRefund("big-2", 2500);
    const page = await signedIn(PEOPLE.dave.token, { refusals: true });
    await expect.poll(() => rows(page).count()).toBeGreaterThanOrEqual(3);
    await page.getByRole("checkbox", { name: "Select Send email on thread mail-4" }).check();
    // x selects the row the keyboard is on.
    const mail5 = rows(page).filter({ hasText: "mail-5" }).filter({ hasText: DEMO.email });
    await mail5.locator(".row-where").click();
    await page.locator("body").click({ position: { x: 5, y: 5 } });
    await page.keyboard.press("x");
    await page.getByRole("checkbox", { name: "Select Issue refund on thread big-2" }).check();
    const bar = page.getByRole("group", { name: "Decide the selected questions" });
    await bar.getByText("3 selected").waitFor();
    // The page can tell the policy will refuse dave, and says so; the server still decides.
    await page.getByText("The server will refuse the whole decision if it refuses one").waitFor();
    await bar.getByRole("button", { name: "Approve 3" }).click();
    // The refund is irreversible: the confirmation names it before anything is sent.
    const confirm = page.getByRole("group", { name: "This cannot be undone" });
    expect(
      await confirm.getByRole("list", { name: "Irreversible actions selected" }).textContent(),
    ).toBe("Issue refund on thread big-2");
    // The confirmation's heading keeps the page's outline (axe's heading-order).
    await expectAccessible(page);
    await confirm.getByRole("button", { name: "Confirm: approve 3" }).click();
    const refusal = page.getByRole("alert").filter({ hasText: "Nothing was applied" });
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain("1 of 3 selected questions were refused");
    const refused = refusal.getByRole("list", { name: "Refused questions" }).getByRole("listitem");
    expect(await refused.count()).toBe(1);
    expect(await refused.textContent()).toMatch(/^Issue refund on thread big-2: not allowed: /);
    await expectAccessible(page);
    // Nothing applied: both emails still pending, the refund without an approval.
    for (const id of ["mail-4", "mail-5"])
      expect((await fixture.alice.listInterrupts({ threadId: id })).items).toHaveLength(2);
    expect(await approvalsOf("big-2")).toEqual([]);

    await refusal.getByRole("button", { name: "Deselect the refused" }).click();
    await bar.getByText("2 selected").waitFor();
    await bar.getByRole("button", { name: "Approve 2" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: "Approved 2 questions: all applied." })
      .waitFor();
    for (const id of ["mail-4", "mail-5"])
      expect(
        (await fixture.alice.listInterrupts({ threadId: id })).items.map((i) => i.namespace[0]),
      ).toEqual([DEMO.refund]);
    expect((await fixture.alice.listInterrupts({ threadId: big.threadId })).items).toHaveLength(1);
  });

  it("bulk: a selected question answered elsewhere leaves the selection live", async () => {
    await fixture.pausedThread("mail-6");
    const page = await signedIn(PEOPLE.alice.token);
    await page.getByRole("searchbox", { name: "Thread" }).fill("mail-6");
    await expect.poll(() => rows(page).count()).toBe(2);
    await page.getByRole("checkbox", { name: "Select all on this page (2)" }).check();
    const bar = page.getByRole("group", { name: "Decide the selected questions" });
    await bar.getByText("2 selected").waitFor();
    const email = (await fixture.alice.listInterrupts({ threadId: "mail-6" })).items.find(
      (i) => i.namespace[0] === DEMO.email,
    )!;
    await fixture.alice.resume("mail-6", {
      target: { runId: email.runId, namespace: email.namespace, interruptId: email.id },
      resume: { type: "accept" },
    });
    await bar.getByText("1 selected", { exact: true }).waitFor({ timeout: 10_000 });
    expect(await bar.getByRole("button", { name: "Approve 1" }).count()).toBe(1);
  });

  it("logged no console error on any page of the run", () => {
    expect(consoleErrors.errors).toEqual([]);
  });
});
