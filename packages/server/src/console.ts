/**
 * Serves the approval console's built assets (`packages/console/dist`) at `/`. Kept apart from
 * the API: only files that exist at start are routed (no wildcard), so every API path and every
 * unknown path answers exactly as without the console.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";

/**
 * Registers the console's files under `/` when `root` holds a built console (`index.html`).
 * Returns whether it did, so a launcher can say where the console is (or how to build it).
 */
export async function registerConsole(app: FastifyInstance, root: string): Promise<boolean> {
  if (!existsSync(join(root, "index.html"))) return false;
  await app.register(fastifyStatic, {
    root,
    prefix: "/",
    // One route per file found now, instead of a catch-all that would shadow API 404s.
    wildcard: false,
    index: ["index.html"],
    // Hashed asset names change with every build; index.html must be re-read every time.
    cacheControl: false,
    setHeaders: (res, path) => {
      res.setHeader(
        "cache-control",
        path.endsWith("index.html") ? "no-cache" : "public, max-age=31536000, immutable",
      );
    },
  });
  return true;
}

/**
 * The `dist` directory of the installed `@rein/console` package (a dependency of this one, so
 * installed with it), or null when it is not installed. Resolved by path, not imported: the
 * package holds only the built page, no code to run.
 */
export function installedConsoleDir(): string | null {
  try {
    const manifest = createRequire(import.meta.url).resolve("@rein/console/package.json");
    return join(dirname(manifest), "dist");
  } catch {
    return null;
  }
}

/** Why no console is served from `dir` (from {@link installedConsoleDir}), as a hint to act on. */
export function missingConsoleHint(dir: string | null): string {
  return dir === null
    ? "@rein/console is not installed next to @rein/server (npm install @rein/console)"
    : `${dir} holds no build (inside the Rein repository: npm run build -w @rein/console)`;
}
