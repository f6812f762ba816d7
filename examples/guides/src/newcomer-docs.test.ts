/**
 * What a newcomer reads first says what the repository does: `npm start` and `npm run demo` are
 * told apart, the AI SDK adapter's README snippet defines what it uses, and the LangGraph guide
 * says what to install and what serves a graph; its snippets run when copied alone; the
 * getting-started guide's tsconfig lets a strict `tsc` check its files as written.
 */
import { execFile } from "node:child_process";
import {
  copyFileSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
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

  it("the getting-started guide's tsconfig type-checks its files, .ts imports included; tsc refuses them without it", async () => {
    const block = /<!-- tsconfig for the getting-started files -->\s*```json\n([\s\S]*?)```/.exec(
      read("docs/guides/getting-started.md"),
    )?.[1];
    expect(block).toBeDefined();
    const tsconfig = JSON.parse(block ?? "{}") as { compilerOptions: Record<string, unknown> };
    expect(tsconfig.compilerOptions["allowImportingTsExtensions"]).toBe(true);
    // A project of its own, outside the repository, whose node_modules resolve @rein/* as an
    // install does: to their built types (`npm test` type-checks, which builds them, first).
    const dir = mkdtempSync(join(tmpdir(), "rein-tsc-check-"));
    symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
    try {
      for (const file of ["graph.ts", "pause.ts", "resume.ts"])
        copyFileSync(join(root, "examples/guides/src/getting-started", file), join(dir, file));
      writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
      const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
      const check = async (options: Record<string, unknown>): Promise<string> => {
        // skipLibCheck spares the check of node_modules' own .d.ts files: time, not meaning.
        const compilerOptions = { ...options, skipLibCheck: true };
        writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions }));
        return promisify(execFile)(process.execPath, [tsc, "-p", dir]).then(
          () => "ok",
          (error: { stdout?: string }) => error.stdout ?? "failed",
        );
      };
      expect(await check(tsconfig.compilerOptions)).toBe("ok");
      const { allowImportingTsExtensions: _dropped, ...without } = tsconfig.compilerOptions;
      expect(await check(without)).toContain("TS5097");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
