/**
 * Worker scripts bundled once per test file: a worker started from a bundle is plain JavaScript
 * and starts in about a third of the time `node --import tsx` takes, which is what lets a crash
 * loop kill hundreds of processes within a CI-sized time budget.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, renameSync } from "node:fs";
import { dirname, join } from "node:path";
import { build } from "esbuild";
import type { ProcessCommand } from "./worker.ts";

/** Packages loaded from node_modules at run time: pg and its optional native half. */
const EXTERNAL = ["pg", "pg-native"];

/** The nearest directory at or above `from` holding a package.json. */
function packageDir(from: string): string {
  let dir = dirname(from);
  while (!existsSync(join(dir, "package.json"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${from}`);
    dir = up;
  }
  return dir;
}

/**
 * Bundles the TypeScript worker `entry` (with the workspace sources it imports) into one ESM file
 * and returns the command that runs it. The bundle lives under the entry's package
 * `node_modules/.cache`, so its external packages resolve as they do for the sources.
 */
export async function bundleWorker(entry: string): Promise<ProcessCommand> {
  const hash = createHash("sha256").update(entry).digest("hex").slice(0, 12);
  const dir = join(packageDir(entry), "node_modules", ".cache", "rein-workers");
  mkdirSync(dir, { recursive: true });
  const outfile = join(dir, `${hash}.mjs`);
  // Test files bundling the same entry at once each write their own file, then rename it into
  // place (atomic), so no worker ever starts from a half-written bundle.
  const scratch = join(dir, `${hash}-${process.pid}.tmp.mjs`);
  await build({
    entryPoints: [entry],
    outfile: scratch,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    external: EXTERNAL,
    // Workspace packages resolve to their TypeScript sources, as in the tests themselves
    // (docs/packaging.md); elsewhere the condition is unknown and the built files are used.
    conditions: ["@rein/source"],
    logLevel: "error",
    // Bundled CommonJS dependencies may call `require`; give them one.
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    },
  });
  renameSync(scratch, outfile);
  return { command: process.execPath, args: [outfile] };
}
