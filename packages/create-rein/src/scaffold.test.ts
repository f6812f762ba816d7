import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "./main.ts";
import { scaffold, starterVersion } from "./scaffold.ts";

const work = mkdtempSync(join(tmpdir(), "create-rein-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("create-rein", () => {
  it("writes the app: graphs, model, test, tokens, .gitignore and a package.json pinned to this version", () => {
    const app = scaffold(join(work, "My App"));
    expect(readdirSync(app.dir).sort()).toEqual([
      ".gitignore",
      "README.md",
      "graphs.test.ts",
      "graphs.ts",
      "package.json",
      "scripted-model.ts",
      "tokens.json",
      "tsconfig.json",
    ]);
    const manifest = JSON.parse(readFileSync(join(app.dir, "package.json"), "utf8")) as {
      name: string;
      scripts: Record<string, string>;
      dependencies: Record<string, string>;
    };
    expect(manifest.name).toBe("my-app");
    expect(manifest.scripts["start"]).toBe("rein serve --graphs ./graphs.ts --tokens tokens.json");
    for (const name of ["@rein/core", "@rein/server", "@rein/ai-sdk"])
      expect(manifest.dependencies[name]).toBe(`^${starterVersion()}`);
    expect(readFileSync(join(app.dir, "README.md"), "utf8")).toMatch(/^# my-app\n/);
    expect(readFileSync(join(app.dir, ".gitignore"), "utf8")).toContain("tokens.json");
  });

  it("makes a fresh token per app, readable by its owner only", () => {
    const a = scaffold(join(work, "a"));
    const b = scaffold(join(work, "b"));
    expect(a.token).not.toBe(b.token);
    expect(a.token.length).toBeGreaterThanOrEqual(16);
    const file = join(a.dir, "tokens.json");
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      tokens: [{ token: a.token, subject: "you", tenant: "a", scopes: ["admin"] }],
    });
    expect(statSync(file).mode & 0o077).toBe(0);
  });

  it("refuses a folder that is not empty and leaves it as it was", () => {
    const dir = join(work, "taken");
    mkdirSync(dir);
    writeFileSync(join(dir, "notes.txt"), "mine");
    const printed: string[] = [];
    expect(main([dir], (t) => printed.push(t))).toBe(1);
    expect(printed.join("")).toBe(`create-rein: ${dir} is not empty: pick a new folder name.\n`);
    expect(readdirSync(dir)).toEqual(["notes.txt"]);
  });

  it("says what to run next", () => {
    const printed: string[] = [];
    expect(main([join(work, "next")], (t) => printed.push(t))).toBe(0);
    expect(printed.join("")).toContain("npm install\n  npm start");
  });

  it("ships a template whose own tests pass (here against the workspace's packages)", async () => {
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
    const test = join(import.meta.dirname, "..", "template", "graphs.test.ts");
    const { stdout } = await promisify(execFile)(process.execPath, [
      "--import",
      tsx,
      "--test",
      // One reporter on every Node (the default differs between 22 and 24 off a terminal).
      "--test-reporter=tap",
      test,
    ]);
    expect(stdout).toMatch(/^# pass 3$/m);
    expect(stdout).toMatch(/^# fail 0$/m);
  });
});
