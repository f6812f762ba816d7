/**
 * The packages as a user installs them: packed tarballs, installed into a fresh project outside
 * the workspace with only their declared dependencies, then used from plain `node` (ESM and
 * CommonJS) and type-checked under both module resolutions users pick. A dependency missing from
 * `dependencies`, an entry missing from `exports` or a file missing from `files` fails here.
 */
import { execFile, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** Every published package; a new package is added here (docs/packaging.md). */
const PACKAGES = [
  "@rein/core",
  "@rein/sqlite",
  "@rein/postgres",
  "@rein/wire",
  "@rein/client",
  "@rein/server",
  "@rein/console",
  "@rein/ai-sdk",
  "@rein/langchain",
  "@rein/openai",
  "@rein/mcp",
];

/** The model SDKs the adapters take as peers: the consumer installs its own copy. */
const PEERS = ["ai", "openai", "@langchain/core"];

const exec = promisify(execFile);
/** Debian's Chromium, driven by playwright-core (no browser download). */
const CHROMIUM = "/usr/bin/chromium";
const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const fixture = fileURLToPath(new URL("./fixture", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "rein-consumer-"));
const tarballs = join(work, "tarballs");
const app = join(work, "app");

// Processes here run the built packages: the "@rein/source" condition the test runner passes on
// (vitest.config.ts) would point them at TypeScript sources, so it is dropped.
const env = { ...process.env, NODE_OPTIONS: "" };

function versionIn(dir: string, name: string): string {
  const manifest = join(dir, "node_modules", name, "package.json");
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}

async function run(
  command: string,
  args: string[],
  cwd: string,
  extraEnv: Record<string, string> = {},
): Promise<string> {
  try {
    const { stdout } = await exec(command, args, {
      cwd,
      env: { ...env, ...extraEnv },
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    // Show what the command printed (tsc reports its errors on stdout).
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(" ")} failed in ${cwd}:\n${stdout}${stderr}`);
  }
}

async function node(script: string, ...args: string[]): Promise<string> {
  const out = await run(process.execPath, [script, ...args], app);
  console.log(`$ node ${script} ${args.join(" ")}\n${out}`);
  return out;
}

async function install(): Promise<void> {
  mkdirSync(tarballs);
  mkdirSync(app);
  // `npm pack` runs each package's `prepack` (tsc -b; the console's `vite build`), so the
  // tarballs hold a current build. NODE_ENV is a releaser's, not the runner's "test", under which
  // Vite would bundle React's development build.
  await run(
    "npm",
    ["pack", ...PACKAGES.flatMap((p) => ["-w", p]), "--pack-destination", tarballs],
    root,
    { NODE_ENV: "production" },
  );
  const packed = PACKAGES.map((name) => {
    const { version } = JSON.parse(
      readFileSync(join(root, "packages", name.split("/")[1] ?? "", "package.json"), "utf8"),
    ) as { version: string };
    return join(tarballs, `${name.slice(1).replace("/", "-")}-${version}.tgz`);
  });
  for (const file of packed) expect(existsSync(file), file).toBe(true);

  // Install scripts stay on: the packages must need none (checked below). typescript and
  // @types/node are the consumer's own tools, matching the workspace's (npm cache hits).
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "rein-consumer", private: true, type: "module" }),
  );
  await run(
    "npm",
    [
      "install",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      ...packed,
      ...PEERS.map((name) => `${name}@${versionIn(root, name)}`),
      `typescript@${versionIn(root, "typescript")}`,
      `@types/node@${versionIn(root, "@types/node")}`,
    ],
    app,
  );

  cpSync(fixture, app, { recursive: true });
}

/** Starts the installed `rein serve --open` under plain node; resolves once it listens. */
function serveInstalled(args: string[]) {
  const bin = join(app, "node_modules", "@rein", "server", "bin", "rein.mjs");
  const serveArgs = ["serve", "--open", "--port", "0", "--log-level", "silent", "--db", "srv.db"];
  const child = spawn(process.execPath, [bin, ...serveArgs, ...args], { cwd: app, env });
  let err = "";
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  return new Promise<{ child: typeof child; url: string; stderr: () => string }>((found, fail) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const url = /listening on (\S+)/.exec(out)?.[1];
      if (url) found({ child, url, stderr: () => err });
    });
    child.on("exit", (code) => fail(new Error(`rein serve exited ${code}: ${err}`)));
  });
}

beforeAll(install, 600_000);
// The scratch install holds every package's dependency tree: removing it on a busy machine can
// take longer than the default 30 s hook timeout.
afterAll(() => rmSync(work, { recursive: true, force: true }), 180_000);

describe("the packed packages, installed outside the workspace", () => {
  it("installs only the declared dependencies, not the workspace's", () => {
    for (const name of PACKAGES) {
      const manifest = join(app, "node_modules", name, "package.json");
      expect(existsSync(manifest), name).toBe(true);
      // The console ships a built page, the others a module.
      const entry = name === "@rein/console" ? "index.html" : "index.js";
      expect(existsSync(join(app, "node_modules", name, "dist", entry)), name).toBe(true);
    }
    // Nothing a workspace-only tool would bring along; the console's page comes built (React and
    // Vite stay behind). tsx is the server's own: it loads TypeScript graph modules.
    for (const name of ["vitest", "vite", "react", "@langchain/langgraph"])
      expect(existsSync(join(app, "node_modules", name)), name).toBe(false);
  });

  it("installs nothing that compiles or downloads at install time: no install script but esbuild's check", () => {
    const lock = JSON.parse(readFileSync(join(app, "package-lock.json"), "utf8")) as {
      packages: Record<string, { hasInstallScript?: boolean }>;
    };
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript === true)
      .map(([path]) => path);
    // esbuild (under tsx, which loads TypeScript graph modules) has a postinstall that only
    // checks its platform binary, which npm installed as an optional dependency: nothing is
    // compiled or downloaded. Any other install script fails this test.
    expect(withScripts.filter((path) => !/(^|\/)node_modules\/esbuild$/.test(path))).toEqual([]);
    const esbuild = JSON.parse(
      readFileSync(join(app, "node_modules", "esbuild", "package.json"), "utf8"),
    ) as { scripts?: Record<string, string> };
    expect(Object.keys(esbuild.scripts ?? {})).toEqual(["postinstall"]);
    expect(esbuild.scripts?.["postinstall"]).toBe("node install.js");
    expect(existsSync(join(app, "node_modules", "better-sqlite3"))).toBe(false);
  });

  it("pauses a run on SQLite in one node process and resumes it in another", async () => {
    const db = join(app, "refunds.db");
    const paused = await node("pause.mjs", db, "thread-1");
    expect(paused).toBe(
      'status: interrupted\nwaiting on node "refund": {"action":"refund","amount":50}\n',
    );
    const done = await node("resume.mjs", db, "thread-1");
    const lines = done.trim().split("\n");
    expect(lines[0]).toBe("status: done");
    const planned = /^log: plan in process (\d+) \| refund approved by alice$/.exec(lines[1] ?? "");
    const resumed = /^resumed in process (\d+)$/.exec(lines[2] ?? "");
    expect(planned, lines[1]).not.toBeNull();
    expect(resumed, lines[2]).not.toBeNull();
    // The plan step ran in the first process; the second only answered and finished the run.
    expect(planned?.[1]).not.toBe(resumed?.[1]);
  }, 60_000);

  it("loads with require() from CommonJS (require(esm))", async () => {
    const out = await node("require.cjs");
    expect(JSON.parse(out)).toEqual({
      StateGraph: "function",
      store: true,
      SqliteSaver: "function",
      PostgresSaver: "function",
      ReinClient: "function",
      createServer: "function",
      fromAiSdk: "function",
      fromLangChain: "function",
      fromOpenAI: "function",
    });
  }, 60_000);

  it("runs the installed rein CLI with plain node", async () => {
    const out = await run(
      process.execPath,
      [join(app, "node_modules", "@rein", "server", "bin", "rein.mjs"), "--help"],
      app,
    );
    expect(out).toContain("rein serve");
  }, 60_000);

  it("serves a TypeScript graphs module and the console's page, which renders in Chromium", async (context) => {
    if (!existsSync(CHROMIUM)) {
      if (process.env["REIN_REQUIRE_BROWSER"] === "1") throw new Error(`${CHROMIUM} is missing`);
      return context.skip(`${CHROMIUM} is missing`);
    }
    const server = await serveInstalled(["--graphs", "./graphs.ts"]);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    try {
      expect(server.stderr()).toContain("graphs: refund");
      expect(server.stderr()).toContain(`approval console at ${server.url}/`);
      const health = await fetch(`${server.url}/healthz`);
      expect(health.status).toBe(200);
      const page = await browser.newPage();
      const failures: string[] = [];
      page.on("pageerror", (error) => failures.push(error.message));
      page.on(
        "response",
        (r) => void (r.status() >= 400 && failures.push(`${r.status()} ${r.url()}`)),
      );
      await page.goto(server.url);
      // React rendered into the root: the built script and its styles were served and ran.
      await page.waitForFunction('document.getElementById("root")?.childElementCount > 0');
      expect(await page.title()).toBe("Rein console");
      expect(failures).toEqual([]);
    } finally {
      await browser.close();
      server.child.kill("SIGKILL");
    }
  }, 120_000);

  for (const resolution of ["nodenext", "bundler"]) {
    it(`type-checks a TypeScript consumer under "moduleResolution": "${resolution}"`, async () => {
      const tsc = join(app, "node_modules", "typescript", "bin", "tsc");
      const out = await run(process.execPath, [tsc, "-p", `tsconfig.${resolution}.json`], app);
      expect(out).toBe("");
    }, 120_000);
  }
});
