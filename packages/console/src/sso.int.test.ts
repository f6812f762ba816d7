/**
 * Single sign-on in the console, in Chromium, against a real OpenID provider (`oidc-provider`
 * in-process on loopback, the console a public client with PKCE required): the Authorization
 * Code flow through the provider's own sign-in pages, the reviewer named from the ID token, an
 * approval recorded as `<issuer>#<subject>`, no token in web storage, renewal with a refresh
 * token, a new sign-in asked for when a token expires without one, and sign-out that ends the
 * provider's session and stops the token from being sent. A token the server refuses (401) is
 * renewed and the request retried once; tokens signed with a rotated key are accepted; a group
 * removed at the provider refuses the reviewer's next approval. Every scene runs on SQLite and on
 * Postgres (one provider and one Chromium shared by both; Postgres skipped with the printed
 * reason when unreachable, a failure with REIN_REQUIRE_POSTGRES=1).
 */
import { probePostgres } from "@rein/postgres/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page, Request } from "playwright-core";
import { browserUnavailable, launchChromium } from "./e2e/browser.ts";
import { ConsoleErrors, expectAccessible } from "./e2e/checks.ts";
import { DEMO, startConsoleFixture, type ConsoleFixture } from "./e2e/fixture.ts";
import { startSsoProvider, type Person, type SsoProvider } from "./e2e/provider.ts";

const unavailable = browserUnavailable();
if (unavailable) console.warn(`Skipping the console single sign-on tests: ${unavailable}.`);

/** The store backends every scene runs on; Postgres when its test server answers. */
const BACKENDS = [
  { name: "sqlite", available: true },
  { name: "postgres", available: unavailable === null && (await probePostgres()).available },
] as const;
type BackendName = (typeof BACKENDS)[number]["name"];

/** One Chromium for the whole file. */
let browser: Browser;

const CAROL: Person = {
  login: "carol",
  name: "Carol Okafor",
  email: "carol@acme.example",
  tenant: "acme",
  groups: ["support-leads"],
};

/** One request the page sent: where, how, the bearer token it carried, and the answer's status. */
interface Sent {
  url: string;
  method: string;
  bearer: string | null;
  /** Null until the answer arrives. */
  status: number | null;
}

/** A scene: one provider, a console server trusting it on each available backend. */
interface Scene {
  provider: SsoProvider;
  fixtures: Partial<Record<BackendName, ConsoleFixture>>;
  contexts: BrowserContext[];
  errors: ConsoleErrors;
}

/** The provider, a console server trusting it per backend, and a browser context per test. */
function scene(options: {
  accessTokenTtlSeconds?: number;
  refreshTokens?: boolean;
  /** The server's clock leeway for `exp` (default the server's, 30 s). */
  leewaySeconds?: number;
  /** How soon the server may refetch the provider's keys (default the server's, 30 s). */
  jwksCooldownSeconds?: number;
}): Scene {
  const s = { fixtures: {}, contexts: [], errors: new ConsoleErrors() } as unknown as Scene;
  beforeAll(async () => {
    s.provider = await startSsoProvider({ people: [CAROL], ...options });
    const { issuer, audience, clientId } = s.provider;
    const { leewaySeconds, jwksCooldownSeconds } = options;
    const oidc = { issuer, audience, clientId, leewaySeconds, jwksCooldownSeconds };
    await Promise.all(
      BACKENDS.filter((b) => b.available).map(async ({ name }) => {
        const fixture = await startConsoleFixture({ backend: name, oidc });
        s.fixtures[name] = fixture;
        s.provider.allowConsole(fixture.url);
      }),
    );
  }, 120_000);
  afterAll(async () => {
    await Promise.all(s.contexts.map((c) => c.close()));
    await Promise.all(Object.values(s.fixtures).map((f) => f.close()));
    await s.provider?.close();
  });
  return s;
}

/** Declares `body` as a test on each backend (skipped where the backend is unavailable). */
function onEachBackend(
  s: Scene,
  name: string,
  body: (fixture: ConsoleFixture) => Promise<void>,
): void {
  for (const backend of BACKENDS)
    it.skipIf(!backend.available)(`${name} (${backend.name})`, () =>
      body(s.fixtures[backend.name]!),
    );
}

/**
 * A page whose requests are recorded; nothing leaves the machine (the provider's development
 * pages link a web font, which is refused here).
 */
async function recordedPage(s: Scene): Promise<{ page: Page; sent: Sent[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  s.contexts.push(context);
  await context.route(
    (url) => url.hostname !== "127.0.0.1",
    (route) => route.abort(),
  );
  const page = await context.newPage();
  const sent: Sent[] = [];
  const byRequest = new WeakMap<Request, Sent>();
  page.on("request", (request) => {
    const auth = request.headers()["authorization"];
    const entry: Sent = {
      url: request.url(),
      method: request.method(),
      bearer: auth?.replace(/^Bearer /, "") ?? null,
      status: null,
    };
    byRequest.set(request, entry);
    sent.push(entry);
  });
  page.on("response", (response) => {
    const entry = byRequest.get(response.request());
    if (entry) entry.status = response.status();
  });
  return { page, sent };
}

/** Signs carol in on the provider's pages, from the console's button to the queue. */
async function signInAtProvider(page: Page, issuer: string): Promise<void> {
  await page.getByRole("button", { name: "Sign in with single sign-on", exact: true }).click();
  await page.waitForURL(`${issuer}/interaction/**`);
  await page.locator('input[name="login"]').fill(CAROL.login);
  await page.locator('input[name="password"]').fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("button", { name: "Continue" }).click();
  await page.getByRole("heading", { name: "Pending approvals" }).waitFor();
}

/** The bearer tokens the page sent to the Rein server, in order, without repeats. */
function bearersToRein(sent: Sent[], url: string): string[] {
  return [
    ...new Set(
      sent.filter((r) => r.url.startsWith(url) && r.bearer).map((r) => r.bearer as string),
    ),
  ];
}

/** The payload of a JWT (not verified: the tests read what the provider put in it). */
function claimsOf(jwt: string): { exp: number; groups?: string[] } {
  return JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString()) as {
    exp: number;
    groups?: string[];
  };
}

/** The `kid` a JWT names in its header. */
function kidOf(jwt: string): string {
  return (JSON.parse(Buffer.from(jwt.split(".")[0]!, "base64url").toString()) as { kid: string })
    .kid;
}

/** Opens demo thread `threadId`'s refund question and accepts it up to the confirmation. */
async function toRefundConfirmation(page: Page): Promise<void> {
  await page
    .getByRole("list", { name: "Pending interrupts, newest first" })
    .getByRole("listitem")
    .filter({ hasText: `${DEMO.name} › ${DEMO.refund} › ${DEMO.node}` })
    .getByRole("link", { name: /^Issue refund/ })
    .click();
  await page.getByRole("button", { name: "Accept", exact: true }).click();
  await page.getByRole("button", { name: "Confirm: issue refund" }).waitFor();
}

describe.skipIf(unavailable !== null)("console single sign-on in Chromium", () => {
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  describe("sign-in, an approval and sign-out", { timeout: 90_000 }, () => {
    const s = scene({});

    onEachBackend(
      s,
      "the provider requires PKCE of the console's public client",
      async (fixture) => {
        const url = new URL(`${s.provider.issuer}/auth`);
        url.search = new URLSearchParams({
          client_id: s.provider.clientId,
          redirect_uri: `${fixture.url}/`,
          response_type: "code",
          scope: "openid",
        }).toString();
        const response = await fetch(url, { redirect: "manual" });
        const back = new URL(response.headers.get("location") ?? "");
        expect(`${back.origin}${back.pathname}`).toBe(`${fixture.url}/`);
        expect(back.searchParams.get("error")).toBe("invalid_request");
        expect(back.searchParams.get("error_description")).toContain("PKCE");
      },
    );

    onEachBackend(
      s,
      "signs in with the code flow and PKCE, names the reviewer, approves as issuer#subject, and signs out",
      async (fixture) => {
        await fixture.pausedThread("sso-1");
        const { page, sent } = await recordedPage(s);
        s.errors.watch(page);
        await page.goto(fixture.url);
        // The sign-in page offers single sign-on once it has read GET /auth/config.
        await page
          .getByRole("button", { name: "Sign in with single sign-on", exact: true })
          .waitFor();
        await expectAccessible(page);
        expect(await page.getByRole("main", { name: "Sign in" }).textContent()).toContain(
          s.provider.issuer,
        );
        await signInAtProvider(page, s.provider.issuer);

        // The authorization request asked for a code with an S256 challenge, for the API's audience.
        const authorize = new URL(
          sent.find((r) => r.url.startsWith(`${s.provider.issuer}/auth?`))!.url,
        );
        expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
          client_id: s.provider.clientId,
          response_type: "code",
          code_challenge_method: "S256",
          redirect_uri: `${fixture.url}/`,
          resource: s.provider.audience,
        });
        expect(authorize.searchParams.get("code_challenge")).toMatch(/^[\w-]{43}$/);
        // Back on the console: no code or state left in the address, nothing in web storage.
        expect(new URL(page.url()).search).toBe("");
        const [token] = bearersToRein(sent, fixture.url);
        expect(token?.split(".")).toHaveLength(3);
        const storage = await page.evaluate(() => ({
          local: JSON.stringify({ ...window.localStorage }),
          session: JSON.stringify({ ...window.sessionStorage }),
        }));
        expect(storage).toEqual({ local: "{}", session: "{}" });

        // The header names the person from the ID token, and their tenant from the access token.
        const who = page.getByLabel("Signed in as");
        expect(await who.textContent()).toBe(`${CAROL.name}${CAROL.email}tenant acme`);
        await expectAccessible(page);

        // An approval: the answer and the audit record carry the provider's issuer and subject.
        await page
          .getByRole("list", { name: "Pending interrupts, newest first" })
          .getByRole("listitem")
          .filter({ hasText: `${DEMO.name} › ${DEMO.refund} › ${DEMO.node}` })
          .getByRole("link", { name: /^Issue refund/ })
          .click();
        await page.getByRole("button", { name: "Accept", exact: true }).click();
        await page.getByRole("button", { name: "Confirm: issue refund" }).click();
        await page.getByText("Acceptance sent for Issue refund").first().waitFor();
        expect(fixture.ledger("sso-1").map((e) => e.amount)).toEqual([120]);
        const audit = await fixture.alice.listAudit({ threadId: "sso-1" });
        expect(audit.items.map((a) => [a.action, a.actor])).toEqual([
          ["answer", "alice@acme"],
          ["answer", `${s.provider.issuer}#${CAROL.login}`],
        ]);

        // Sign-out: the provider's logout page (RP-initiated), then back to the console's sign-in.
        const before = sent.length;
        await page.getByRole("button", { name: "Sign out" }).click();
        await page.waitForURL(`${s.provider.issuer}/session/end**`);
        await page.getByRole("button", { name: "Yes, sign me out" }).click();
        await page
          .getByRole("button", { name: "Sign in with single sign-on", exact: true })
          .waitFor();
        expect(new URL(page.url()).origin).toBe(new URL(fixture.url).origin);
        const after = sent.slice(before);
        expect(after.filter((r) => r.bearer !== null)).toEqual([]);
        // The logout carried the ID token as a hint and the console's own page to come back to.
        const logout = new URL(after.find((r) => r.url.includes("/session/end?"))!.url);
        expect(logout.searchParams.get("post_logout_redirect_uri")).toBe(`${fixture.url}/`);
        expect(logout.searchParams.get("id_token_hint")?.split(".")).toHaveLength(3);
        // The old token still works at the API (it is a JWT), but the console no longer has it...
        expect(
          (await fetch(`${fixture.url}/whoami`, { headers: { authorization: `Bearer ${token}` } }))
            .status,
        ).toBe(200);
        await page.waitForTimeout(1500);
        expect(sent.slice(before).filter((r) => r.bearer !== null)).toEqual([]);
        // ...and the provider's session ended: signing in again asks for the password again.
        await page
          .getByRole("button", { name: "Sign in with single sign-on", exact: true })
          .click();
        await page.waitForURL(`${s.provider.issuer}/interaction/**`);
        await page.locator('input[name="login"]').waitFor();
        // No error on the console's pages (the provider's pages miss only their refused web font).
        expect(s.errors.errors.filter((e) => e.startsWith(fixture.url))).toEqual([]);
      },
    );
  });

  describe("a token that expires with a refresh token at hand", { timeout: 180_000 }, () => {
    // The server may refetch the provider's keys a second after it last did (the rotation below
    // comes seconds after the sign-in's fetch; with the default 30 s cooldown it would wait).
    const s = scene({ accessTokenTtlSeconds: 8, refreshTokens: true, jwksCooldownSeconds: 1 });

    onEachBackend(
      s,
      "renews before expiry, and requests go on with the new token",
      async (fixture) => {
        const { page, sent } = await recordedPage(s);
        await page.goto(fixture.url);
        await signInAtProvider(page, s.provider.issuer);
        const [first] = bearersToRein(sent, fixture.url);
        const refreshes = () => sent.filter((r) => r.url === `${s.provider.issuer}/token`).length;
        expect(refreshes()).toBe(1); // the code redeemed
        await expect.poll(refreshes, { timeout: 20_000 }).toBeGreaterThanOrEqual(2);
        // Still signed in: the next screen reads with the renewed token.
        await fixture.pausedThread("sso-renewed");
        await page.evaluate(() => (window.location.hash = "#/threads/sso-renewed"));
        await expect
          .poll(() => bearersToRein(sent, fixture.url).length, { timeout: 10_000 })
          .toBeGreaterThanOrEqual(2);
        await page.getByText("sso-renewed").first().waitFor();
        expect(await page.getByRole("alert").count()).toBe(0);
        const renewed = bearersToRein(sent, fixture.url).at(-1)!;
        expect(renewed).not.toBe(first);
        const me = await fetch(`${fixture.url}/whoami`, {
          headers: { authorization: `Bearer ${renewed}` },
        });
        expect(((await me.json()) as { subject: string }).subject).toBe(
          `${s.provider.issuer}#${CAROL.login}`,
        );
      },
    );

    onEachBackend(
      s,
      "accepts the token signed with a rotated key, and refuses the approval of a reviewer whose group was removed",
      async (fixture) => {
        const carol = s.provider.person(CAROL.login);
        carol.groups = ["finance"];
        // A refund over $1,000 that alice asked for: it needs two approvers from finance.
        await fixture.alice.createThread({ graph: "governed", threadId: "sso-groups" });
        const asked = await fixture.alice.startRun("sso-groups", {
          input: { amount: 1500 },
          wait: true,
        });
        expect(asked.status).toBe("interrupted");
        const [item] = (await fixture.alice.listInterrupts({ threadId: "sso-groups" })).items;
        const { page, sent } = await recordedPage(s);
        s.errors.watch(page, { refusals: true });
        await page.goto(fixture.url);
        await signInAtProvider(page, s.provider.issuer);
        await page.evaluate(
          (id) => (window.location.hash = `#/threads/sso-groups/interrupts/${id}`),
          item!.id,
        );
        await page.getByRole("button", { name: "Accept", exact: true }).click();
        const confirm = page.getByRole("button", { name: "Confirm: issue refund" });
        await confirm.waitFor();
        const [first] = bearersToRein(sent, fixture.url);
        expect(claimsOf(first!).groups).toEqual(["finance"]);

        // At the provider: a new signing key, and carol is no longer in finance.
        const kid = s.provider.rotateKeys();
        carol.groups = [];
        const tokenCalls = () => sent.filter((r) => r.url === `${s.provider.issuer}/token`).length;
        const renewed = tokenCalls();
        await expect.poll(tokenCalls, { timeout: 20_000 }).toBeGreaterThan(renewed);
        await expect
          .poll(() => sent.filter((r) => r.url === `${s.provider.issuer}/token`).at(-1)?.status)
          .toBe(200);

        // Her approval goes with the renewed token: signed with the new key and accepted (a 403,
        // not a 401), but refused, with the reason on the screen, and nothing recorded.
        const before = sent.length;
        await confirm.click();
        const refusal = page.getByRole("alert").filter({ hasText: "Not allowed" });
        await refusal.waitFor();
        expect(await refusal.textContent()).toContain("finance");
        expect(await refusal.textContent()).toContain("Nothing was applied.");
        const posts = sent
          .slice(before)
          .filter((r) => r.method === "POST" && r.url.startsWith(fixture.url));
        expect(posts.map((r) => r.status)).toEqual([403]);
        const token = posts[0]!.bearer!;
        expect(kidOf(token)).toBe(kid);
        expect(kidOf(first!)).not.toBe(kid);
        expect(claimsOf(token).groups).toEqual([]);
        const me = await fetch(`${fixture.url}/whoami`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(me.status).toBe(200);
        const [after] = (await fixture.alice.listInterrupts({ threadId: "sso-groups" })).items;
        expect(after?.approval?.approvals).toEqual([]);
        expect((await fixture.alice.getThread("sso-groups")).status).toBe("interrupted");
        expect(s.errors.errors.filter((e) => e.startsWith(fixture.url))).toEqual([]);
      },
    );
  });

  describe("a token the server refuses before its stated expiry", { timeout: 180_000 }, () => {
    const s = scene({ refreshTokens: true, leewaySeconds: 0 });

    onEachBackend(
      s,
      "renews once on the 401 and retries: the approval goes through with the new token, no error shown",
      async (fixture) => {
        await fixture.pausedThread("sso-401");
        const { page, sent } = await recordedPage(s);
        s.errors.watch(page, { refusals: true });
        // The token of this sign-in dies at the server after 20 s (time to sign in and reach
        // the confirmation on a busy machine); the provider says 300 s.
        s.provider.cutShort(20);
        await page.goto(fixture.url);
        await signInAtProvider(page, s.provider.issuer);
        s.provider.cutShort(null);
        const [first] = bearersToRein(sent, fixture.url);
        await toRefundConfirmation(page);
        const refused = () => sent.filter((r) => r.status === 401);
        await page.waitForTimeout(Math.max(0, claimsOf(first!).exp * 1000 + 1000 - Date.now()));
        // Until now every request carried the first token and none was refused.
        expect(refused()).toEqual([]);
        expect(bearersToRein(sent, fixture.url)).toEqual([first]);

        const before = sent.length;
        await page.getByRole("button", { name: "Confirm: issue refund" }).click();
        await page.getByText("Acceptance sent for Issue refund").first().waitFor();
        const after = sent.slice(before);
        const posts = after.filter((r) => r.method === "POST" && r.url.startsWith(fixture.url));
        // The approval was sent twice: refused with the dead token, then retried once with the
        // renewed one, which one refresh at the provider brought.
        expect(posts).toHaveLength(2);
        expect(posts[0]).toMatchObject({ bearer: first, status: 401 });
        expect(posts[1]!.url).toBe(posts[0]!.url);
        expect(posts[1]!.bearer).not.toBe(first);
        expect(posts[1]!.status).toBeLessThan(300);
        expect(after.filter((r) => r.url === `${s.provider.issuer}/token`)).toHaveLength(1);
        expect(refused()).toHaveLength(1);
        expect(claimsOf(posts[1]!.bearer!).exp * 1000).toBeGreaterThan(Date.now() + 200_000);
        // The user saw no error; the refund ran once, recorded as carol.
        expect(await page.getByRole("alert").count()).toBe(0);
        expect(fixture.ledger("sso-401").map((e) => e.amount)).toEqual([120]);
        const audit = await fixture.alice.listAudit({ threadId: "sso-401" });
        expect(audit.items.at(-1)?.actor).toBe(`${s.provider.issuer}#${CAROL.login}`);
        expect(s.errors.errors.filter((e) => e.startsWith(fixture.url))).toEqual([]);
      },
    );
  });

  describe("a token that expires without a refresh token", { timeout: 90_000 }, () => {
    const s = scene({ accessTokenTtlSeconds: 4, refreshTokens: false });

    onEachBackend(
      s,
      "asks to sign in again, and sends the expired token no more",
      async (fixture) => {
        const { page, sent } = await recordedPage(s);
        await page.goto(fixture.url);
        await signInAtProvider(page, s.provider.issuer);
        const [token] = bearersToRein(sent, fixture.url);
        await page.getByRole("alert").filter({ hasText: "Your sign-in expired" }).waitFor({
          timeout: 15_000,
        });
        expect(
          await page
            .getByRole("button", { name: "Sign in with single sign-on", exact: true })
            .count(),
        ).toBe(1);
        const ended = sent.length;
        await page.waitForTimeout(1500);
        expect(sent.slice(ended).filter((r) => r.bearer === token)).toEqual([]);
      },
    );
  });
});
