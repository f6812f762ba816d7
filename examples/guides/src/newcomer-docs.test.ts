/**
 * What a newcomer reads first says what the repository does: `npm start` and `npm run demo` are
 * told apart, the AI SDK adapter's README snippet defines what it uses, and the LangGraph guide
 * says what to install and what serves a graph; its snippets run when copied alone.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../../..");
const read = (path: string): string => readFileSync(join(root, path), "utf8");

describe("the newcomer's pages", () => {
  it("no page calls npm start the same as npm run demo: one serves the console, one walks through", () => {
    const start = JSON.parse(read("package.json")) as { scripts: Record<string, string> };
    expect(start.scripts["start"]).not.toBe(start.scripts["demo"]);
    for (const page of ["README.md", "docs/agents.md"]) {
      expect(read(page)).not.toMatch(/same as `npm run demo`|until the server lands/);
    }
  });

  it("the AI SDK adapter's README snippet defines the tools it passes", () => {
    const snippet = /```ts\n([\s\S]*?)```/.exec(read("packages/ai-sdk/README.md"))?.[1] ?? "";
    expect(snippet).toContain("tools");
    expect(snippet).toMatch(/const tools\b|tools = /);
  });

  it("the LangGraph guide has an install line and names @rein/server for serving", () => {
    const guide = read("docs/guides/from-langgraph.md");
    expect(guide).toMatch(/npm install @rein\/core/);
    expect(guide).toContain("@rein/server");
  });

  it("the LangGraph guide's snippets import no file of their own folder: each runs copied alone", () => {
    const guide = read("docs/guides/from-langgraph.md");
    const snippets = [...guide.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
    expect(snippets.length).toBeGreaterThan(0);
    for (const snippet of snippets) expect(snippet).not.toMatch(/from\s+["']\.{1,2}\//);
  });
});
