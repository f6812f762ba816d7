/**
 * The Node.js floor: every manifest declares the root's `engines.node`, and the root scripts with
 * a `pre` hook (`npm start`, `npm test`, …) stop at once on an older Node with one line naming
 * the version needed and how to get it. The older Node is simulated by a copy of the scripts
 * under a manifest whose floor is above the running Node, so the check runs on the real binary.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const floor = (path: string): unknown =>
  (JSON.parse(readFileSync(join(root, path), "utf8")) as { engines?: { node?: string } }).engines
    ?.node;

const scratch = mkdtempSync(join(tmpdir(), "rein-node-floor-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs `script` of a copy of scripts/ whose root manifest asks for Node `range`. */
function runWithFloor(range: string, script: string) {
  const dir = mkdtempSync(join(scratch, "repo-"));
  cpSync(join(root, "scripts"), join(dir, "scripts"), { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ engines: { node: range } }));
  return spawnSync(process.execPath, [join(dir, script)], { cwd: dir, encoding: "utf8" });
}

describe("the Node.js floor", () => {
  it("every package.json (root, packages, examples) declares the root's engines.node", () => {
    const manifests = ["packages", "examples"].flatMap((folder) =>
      readdirSync(join(root, folder)).map((name) => `${folder}/${name}/package.json`),
    );
    expect(floor("package.json")).toMatch(/^>=22\.\d+$/);
    for (const path of manifests) expect(floor(path), path).toBe(floor("package.json"));
  });

  it("on an older Node, the pre hook stops before installing, with one line saying what to do", () => {
    const [major] = process.versions.node.split(".");
    const result = runWithFloor(`>=${Number(major) + 1}.0`, "scripts/ensure-install.mjs");
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(
      `Rein needs Node.js ${Number(major) + 1}.0 or newer (22, 24 or 26); this is ${process.version}. ` +
        "Install a current LTS from https://nodejs.org/ (or run `nvm install 24`), then try again.\n",
    );
  });

  it("on a supported Node, the check prints nothing and lets the script go on", () => {
    const result = runWithFloor(String(floor("package.json")), "scripts/lib/require-node.mjs");
    expect(result).toMatchObject({ status: 0, stdout: "", stderr: "" });
  });
});
