import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
// The example runs in a scratch folder (its database lands there), so tsx is given by path.
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const main = fileURLToPath(new URL("./main.ts", import.meta.url));
const readme = fileURLToPath(new URL("../../../README.md", import.meta.url));
const cwd = mkdtempSync(join(tmpdir(), "rein-quickstart-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe("the README example", () => {
  it("is the runnable quickstart, word for word", () => {
    const markdown = readFileSync(readme, "utf8");
    const section = markdown.slice(markdown.indexOf("## Pause and resume"));
    const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(block).toBe(readFileSync(main, "utf8"));
  });

  it("pauses for approval, then resumes to a single payment", async () => {
    const { stdout } = await run(process.execPath, ["--import", tsx, main], { cwd });
    expect(stdout).toMatch(
      /run interrupted, waiting on:\n {2}i_\S+ at node "refund": \{"action":"refund","args":\{"amount":50\}/,
    );
    expect(stdout).toContain(
      'run done: plan: refund $50 for "order 1042 arrived broken" | refund: paid, receipt-1',
    );
  }, 60_000);
});
