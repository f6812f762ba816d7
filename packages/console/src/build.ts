/**
 * Where the console's build lives and how to bring it up to date: `vite build` runs only when
 * `dist/index.html` is missing or older than a source file, so a fresh clone builds once and
 * later runs cost a directory walk.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));

/** The built console (`packages/console/dist`), for the server's `consoleDir` option. */
export const consoleDir: string = join(packageDir, "dist");

function newestSource(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) {
    if (entry.endsWith(".test.ts") || entry === "e2e") continue;
    newest = Math.max(newest, newestSource(join(path, entry)));
  }
  return newest;
}

/** Whether `dist` holds a build at least as new as every UI source file. */
export function consoleIsFresh(): boolean {
  const index = join(consoleDir, "index.html");
  if (!existsSync(index)) return false;
  const built = statSync(index).mtimeMs;
  const sources = [
    join(packageDir, "src", "ui"),
    join(packageDir, "index.html"),
    join(packageDir, "vite.config.ts"),
  ];
  return sources.every((s) => newestSource(s) <= built);
}

/**
 * Builds the console with Vite unless the build is fresh. Returns whether it built.
 *
 * @example
 * await ensureConsoleBuilt();
 * const server = await createServer({ ...options, consoleDir });
 */
export async function ensureConsoleBuilt(): Promise<boolean> {
  if (consoleIsFresh()) return false;
  // A child process with NODE_ENV=production: inside a test runner (NODE_ENV=test) Vite would
  // otherwise produce a development build of React.
  const vite = join(
    dirname(createRequire(import.meta.url).resolve("vite/package.json")),
    "bin",
    "vite.js",
  );
  await promisify(execFile)(process.execPath, [vite, "build"], {
    cwd: packageDir,
    env: { ...process.env, NODE_ENV: "production" },
  });
  return true;
}
