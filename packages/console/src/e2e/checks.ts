/**
 * What every browser test checks on every screen: no console errors during the run, axe-core
 * finding nothing, and no text broken inside a word.
 */
import { expect } from "vitest";
import type { Page } from "playwright-core";
import { a11yViolations } from "./browser.ts";

/** Console errors and uncaught exceptions of the pages a test opened. */
export class ConsoleErrors {
  readonly errors: string[] = [];

  /**
   * Listens to `page`. With `refusals`, the browser's own line for a 4xx the test provokes on
   * purpose (a wrong token, another tenant's thread) is not an error of the console.
   */
  watch(page: Page, options: { refusals?: boolean } = {}): Page {
    page.on("console", (message) => {
      if (message.type() !== "error") return;
      const text = message.text();
      if (options.refusals && /status of 4\d\d/.test(text)) return;
      this.errors.push(`${page.url()}: ${text}`);
    });
    page.on("pageerror", (error) => this.errors.push(`${page.url()}: ${error.message}`));
    return page;
  }
}

/** axe-core finds no violation at all (every impact) on the page as it is now. */
export async function expectAccessible(page: Page): Promise<void> {
  expect(await a11yViolations(page)).toEqual([]);
}

/** A word whose text runs over more than one line. */
export interface BrokenWord {
  word: string;
  /** The tag and class of its element. */
  in: string;
}

/**
 * Words of the visible text that the layout breaks inside (a word is a run without white space;
 * it is broken when its glyphs sit on more than one line). Text cut with an ellipsis is one line.
 */
export function brokenWords(page: Page): Promise<BrokenWord[]> {
  return page.evaluate(() => {
    const broken: { word: string; in: string }[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? "";
      const parent = node.parentElement;
      if (!parent || parent.closest("pre, textarea, script, style, [hidden]")) continue;
      if (parent.getClientRects().length === 0) continue;
      for (const match of text.matchAll(/\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const tops = new Set(
          [...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)),
        );
        if (tops.size > 1)
          broken.push({
            word: match[0],
            in: `${parent.tagName.toLowerCase()}.${parent.className}`,
          });
      }
    }
    return broken;
  });
}

/** No word on the page is broken across lines. */
export async function expectNoBrokenWords(page: Page): Promise<void> {
  expect(await brokenWords(page)).toEqual([]);
}
