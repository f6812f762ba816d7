/**
 * Imports a user's module by path or package name, TypeScript included, and turns a failure into
 * one line that names the module and the cause.
 *
 * TypeScript goes through tsx, which the server brings: Node's own type stripping exists only on
 * some supported lines (unflagged from 22.18 and 23.6), refuses what is not erasable (enums,
 * parameter properties) and extensionless relative imports, so a `graphs.ts` that loads on one
 * Node would fail on another. With tsx it loads the same way on every line.
 */
import { existsSync } from "node:fs";
import { extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { InvalidInputError } from "@rein/core";

const TYPESCRIPT = new Set([".ts", ".mts", ".cts", ".tsx"]);
const SCRIPT = new Set([...TYPESCRIPT, ".js", ".mjs", ".cjs", ".jsx"]);

/** Set once tsx's loader is registered in this process (registering twice would chain it twice). */
let typescriptLoader: Promise<void> | null = null;

/** tsx's ESM hooks and its CommonJS hooks: a `.ts` file outside a `"type": "module"` package is CommonJS to Node. */
function registerTypeScript(): Promise<void> {
  typescriptLoader ??= Promise.all([import("tsx/esm/api"), import("tsx/cjs/api")]).then(
    ([esm, cjs]) => {
      esm.register();
      cjs.register();
    },
  );
  return typescriptLoader;
}

/** The cause of a failed import in one line: where (when known) and what, no stack. */
function causeOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const lines = error.message
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  // "Transform failed with 1 error:" says nothing alone; the next line says where and what.
  const head = lines[0]?.endsWith(":") ? lines.slice(0, 2).join(" ") : (lines[0] ?? "");
  return `${error.name}: ${head}`;
}

/**
 * Imports `specifier`: a file when one exists at that path (relative to the working directory),
 * else a package name.
 *
 * @throws InvalidInputError (`invalid_input`) when there is no such file, or the module (or
 *   something it imports) fails to load; the message names the module and the cause in one line.
 */
export async function importModule(specifier: string): Promise<unknown> {
  const path = resolve(specifier);
  const isFile = existsSync(path);
  if (!isFile && (/^\.{0,2}\//.test(specifier) || SCRIPT.has(extname(specifier))))
    throw new InvalidInputError(`No module at ${specifier} (looked for ${path}).`, {
      module: specifier,
    });
  if (isFile && TYPESCRIPT.has(extname(path))) await registerTypeScript();
  try {
    return (await import(isFile ? pathToFileURL(path).href : specifier)) as unknown;
  } catch (error) {
    const cause = causeOf(error);
    throw new InvalidInputError(`Could not load ${specifier}: ${cause}`, {
      module: specifier,
      cause,
    });
  }
}
