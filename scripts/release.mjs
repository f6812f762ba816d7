// `npm run release`: the whole release in one command. Applies the pending changesets (versions
// and CHANGELOG.md of every @rein package, released together at one version), syncs the
// lockfile, builds from clean, runs the full test suite (consumer test included), commits and
// tags, then publishes to npm. `npm run release -- --dry-run` stops before the commit and shows
// what each tarball would hold instead of publishing.
//
// `--registry URL` publishes to that registry instead of npm's (the local-registry rehearsal,
// scripts/registry-test.sh, in a throwaway copy of the repository); `--skip-tests` leaves out
// step 3 there, because the rehearsal runs after the suite has passed on the same commit.
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, rmSync } from "node:fs";
import { parseArgs } from "node:util";

const { values: flags } = parseArgs({
  options: {
    "dry-run": { type: "boolean", default: false },
    registry: { type: "string" },
    "skip-tests": { type: "boolean", default: false },
  },
});
const dryRun = flags["dry-run"];
const changeset = "tools/node_modules/.bin/changeset";
const run = (command, args) => execFileSync(command, args, { stdio: "inherit" });
const output = (command, args) => execFileSync(command, args, { encoding: "utf8" }).trim();
const step = (text) => console.log(`\n[release] ${text}`);

/** Every publishable package (not `private`): its folder and its name. */
const published = readdirSync("packages")
  .map((dir) => ({
    dir,
    manifest: JSON.parse(readFileSync(`packages/${dir}/package.json`, "utf8")),
  }))
  .filter(({ manifest }) => !manifest.private)
  .map(({ dir, manifest }) => ({ dir, name: manifest.name }));

if (!dryRun && output("git", ["status", "--porcelain"]) !== "") {
  console.error("[release] the work tree has uncommitted changes: commit or stash them first.");
  process.exit(1);
}
step("installing the release tools");
run("node", ["scripts/ensure-tools.mjs"]);

step("applying changesets (versions, changelogs)");
const before = output("git", ["status", "--porcelain"]);
run(changeset, ["version"]);
if (output("git", ["status", "--porcelain"]) === before) {
  console.log(
    "[release] no pending changesets: nothing to release (add one with `npm run changeset`).",
  );
  process.exit(0);
}
run("npm", ["install", "--package-lock-only", "--no-audit", "--no-fund"]);

step("building from clean");
for (const { dir } of published) rmSync(`packages/${dir}/dist`, { recursive: true, force: true });
run("npx", ["tsc", "-b"]);

if (flags["skip-tests"]) step("tests skipped (--skip-tests)");
else {
  step("testing (lint, typecheck, unit, integration, consumer)");
  run("npm", ["test"]);
}

const version = JSON.parse(output("npm", ["pkg", "get", "version", "-w", "@rein/core"]))[
  "@rein/core"
];
if (dryRun) {
  step(`dry run: would commit, tag v${version} and publish; the tarballs would hold:`);
  run("npm", ["pack", "--dry-run", ...published.flatMap(({ name }) => ["-w", name])]);
  console.log("[release] dry run: the version changes are left in the work tree to inspect.");
} else {
  step(`committing and tagging v${version}`);
  run("git", ["commit", "-am", `Release ${version}`]);
  run("git", ["tag", `v${version}`]);
  step(`publishing to ${flags.registry ?? "npm"}`);
  // Changesets publishes (and checks what is already published) where npm_config_registry says.
  execFileSync(changeset, ["publish"], {
    stdio: "inherit",
    env: flags.registry ? { ...process.env, npm_config_registry: flags.registry } : process.env,
  });
  console.log(`[release] v${version} published; push the commit and tags: git push --follow-tags`);
}
