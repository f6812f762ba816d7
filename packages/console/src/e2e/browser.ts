/**
 * Debian's Chromium driven by playwright-core (no browser download): whether it is installed,
 * how it is launched, and the accessibility check (axe-core injected into the page).
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { chromium, type Browser, type Page } from "playwright-core";

/** Where Debian's `chromium` package puts the browser. */
export const CHROMIUM = "/usr/bin/chromium";

/** Flags for a quiet, reproducible headless run in a container. */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
];

/**
 * Null when the browser tests can run; otherwise why not. With `REIN_REQUIRE_BROWSER=1` (CI) a
 * missing browser is an error, not a skip.
 */
export function browserUnavailable(): string | null {
  if (existsSync(CHROMIUM)) return null;
  const reason = `${CHROMIUM} is missing (install it with: apt-get install -y chromium)`;
  if (process.env["REIN_REQUIRE_BROWSER"] === "1")
    throw new Error(`${reason}, and REIN_REQUIRE_BROWSER=1.`);
  return reason;
}

/**
 * Launches Chromium. Playwright gives every launch a fresh temporary user data dir, removed on
 * close, so no profile state leaks between runs.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}

/** One axe-core finding. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: number;
}

const axeSource = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/** Runs axe-core on the page (WCAG 2.x A and AA rules and best practices): every finding. */
export async function a11yViolations(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ path: axeSource });
  const violations = await page.evaluate(async () => {
    interface AxeResult {
      violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[];
    }
    const axe = (
      window as unknown as { axe: { run(ctx: Document, options: unknown): Promise<AxeResult> } }
    ).axe;
    const result = await axe.run(document, {
      runOnly: {
        type: "tag",
        values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"],
      },
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.length,
    }));
  });
  return violations;
}

/**
 * Opens the console at `url` on `page` and signs in with `token`: done once the queue's heading
 * shows. Returns the page.
 */
export async function signIn(page: Page, url: string, token: string): Promise<Page> {
  await page.goto(url);
  await page.getByLabel("Access token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Pending approvals" }).waitFor();
  return page;
}
