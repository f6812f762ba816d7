// Runs before `npm start` and `npm test`: on a fresh clone (no node_modules yet, or a lockfile
// newer than the installed tree) it installs from the lockfile first, so the README's two
// commands are all a newcomer types. The bench's peer runtimes are not part of this install
// (scripts/ensure-bench.mjs installs them when the bench runs). A Node.js older than
// `engines.node` stops here first, with one line (./lib/require-node.mjs).
import "./lib/require-node.mjs";
import { execSync } from "node:child_process";
import { ci, needsInstall } from "./lib/install.mjs";

if (needsInstall(".")) {
  console.log("Installing dependencies from package-lock.json (nothing is compiled).");
  await ci(".");
}

// The server serves the approval console's build at `/`; build it when missing or out of date.
execSync("npm run --silent build:if-stale --workspace @rein/console", { stdio: "inherit" });
