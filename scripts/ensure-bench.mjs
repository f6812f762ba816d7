// Runs before `npm run bench` and `npm run test:bench`: installs the bench's own dependencies
// (LangGraph.js, LangChain core, langsmith and their checkpointers, pinned by
// bench/package-lock.json), which the root install leaves out. better-sqlite3 is installed without
// its build script and given the addon the root install already compiled when the versions match
// (the same source built for the same Node); otherwise it is compiled.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ci, needsInstall } from "./lib/install.mjs";

const addon = join("node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node");
const version = (dir) =>
  JSON.parse(readFileSync(join(dir, "node_modules", "better-sqlite3", "package.json"), "utf8"))
    .version;

if (needsInstall(".")) await ci(".");
if (needsInstall("bench")) {
  await ci("bench", ["--ignore-scripts"]);
  if (version(".") === version("bench") && existsSync(addon)) {
    console.log("[install] bench: reusing the root's better-sqlite3 addon");
    cpSync(addon, join("bench", addon));
  } else {
    console.log("[install] bench: compiling better-sqlite3");
    execFileSync("npm", ["rebuild", "better-sqlite3"], { cwd: "bench", stdio: "inherit" });
  }
}
