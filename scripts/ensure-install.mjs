// Runs before `npm start` and `npm test`: on a fresh clone (no node_modules yet, or a lockfile
// newer than the installed tree) it installs from the lockfile first, so the README's two
// commands are all a newcomer types.
import { execSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";

const installed = "node_modules/.package-lock.json";
const stale =
  !existsSync(installed) || statSync("package-lock.json").mtimeMs > statSync(installed).mtimeMs;
if (stale) {
  console.log("Installing dependencies from package-lock.json (npm ci)...");
  execSync("npm ci --no-audit --no-fund", { stdio: "inherit" });
}

// The server serves the approval console's build at `/`; build it when missing or out of date.
execSync("npm run --silent build:if-stale --workspace @rein/console", { stdio: "inherit" });
