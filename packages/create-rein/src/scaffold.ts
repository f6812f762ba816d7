/**
 * Writes a new Rein app into a folder: the template's files, a `package.json` that pins the Rein
 * packages to this starter's version, and a tokens file with a fresh random token.
 */
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, readFileSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";

const packageDir = resolve(import.meta.dirname, "..");

/** Thrown when the target folder cannot take a new app; the message says what to do. */
export class ScaffoldError extends Error {
  override readonly name = "ScaffoldError";
}

/** What {@link scaffold} wrote. */
export interface Scaffolded {
  /** Absolute path of the new app. */
  dir: string;
  /** Its package name (the folder's name). */
  name: string;
  /** The token in `tokens.json`, for the console's sign-in. */
  token: string;
}

/** The version of this starter, which is the version of every `@rein/*` package it pins. */
export function starterVersion(): string {
  const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as {
    version: string;
  };
  return manifest.version;
}

function manifest(name: string, version: string): Record<string, unknown> {
  const rein = `^${version}`;
  return {
    name,
    version: "0.1.0",
    private: true,
    type: "module",
    engines: { node: ">=22" },
    scripts: {
      start: "rein serve --graphs ./graphs.ts --tokens tokens.json",
      test: "tsc && node --import tsx --test graphs.test.ts",
    },
    dependencies: {
      "@rein/ai-sdk": rein,
      "@rein/core": rein,
      "@rein/server": rein,
      ai: "^6.0.0",
      zod: "^4.6.7",
    },
    devDependencies: { "@types/node": "^22.20.7", tsx: "^4.23.15", typescript: "^5.9.3" },
  };
}

function tokens(name: string): { file: string; token: string } {
  const token = randomBytes(24).toString("base64url");
  const entry = { token, subject: "you", tenant: name, scopes: ["admin"] };
  return { file: `${JSON.stringify({ tokens: [entry] }, null, 2)}\n`, token };
}

/**
 * Creates the app in `target` (made if missing).
 *
 * @throws ScaffoldError when `target` exists and is not an empty folder.
 */
export function scaffold(target: string, version: string = starterVersion()): Scaffolded {
  const dir = resolve(target);
  if (existsSync(dir) && readdirSync(dir).length > 0)
    throw new ScaffoldError(`${target} is not empty: pick a new folder name.`);
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-");
  cpSync(join(packageDir, "template"), dir, { recursive: true });
  // npm leaves a `.gitignore` out of a published tarball, so the template holds it without the dot.
  renameSync(join(dir, "gitignore"), join(dir, ".gitignore"));
  const readme = join(dir, "README.md");
  writeFileSync(readme, readFileSync(readme, "utf8").replaceAll("{{name}}", name));
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest(name, version), null, 2)}\n`);
  const { file, token } = tokens(name);
  writeFileSync(join(dir, "tokens.json"), file, { mode: 0o600 });
  return { dir, name, token };
}
