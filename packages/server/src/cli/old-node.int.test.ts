/**
 * The `rein` bin on a Node.js older than the package's `engines.node` (Debian's Node.js 20 at
 * /usr/bin/node): one line saying which version is needed, the line `npm start` prints, and exit
 * 1 — not a stack trace about `DatabaseSync`.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const OLD_NODE = "/usr/bin/node";
const BIN = resolve(import.meta.dirname, "../../bin/rein.mjs");

function majorOf(node: string): number {
  if (!existsSync(node)) return Number.NaN;
  const out = spawnSync(node, ["-p", "process.versions.node"], { encoding: "utf8" });
  return Number(out.stdout.split(".")[0]);
}

const major = majorOf(OLD_NODE);

describe.skipIf(!(major < 22))(`rein on Node.js ${major}`, () => {
  it("prints the one version line and exits 1", () => {
    const run = spawnSync(OLD_NODE, [BIN, "interrupts"], { encoding: "utf8", timeout: 20_000 });
    expect(run.status).toBe(1);
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^Rein needs Node\.js 22\.13 or newer \(22, 24 or 26\); this is v20\./,
    );
    expect(run.stderr).not.toContain("DatabaseSync");
  });
});
