#!/usr/bin/env node
// The `rein` command. An installed package runs its build (`dist/`). Inside the repository the
// sources run through tsx with the `@rein/source` export condition (so `@rein/*` imports resolve
// to sources too); without that condition on the command line, the bin starts itself again with
// it.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import { URL, fileURLToPath } from "node:url";

// On a Node.js older than `engines.node` the CLI would stop on a missing `node:sqlite` export:
// say which version is needed instead, in the line `npm start` prints, and stop.
const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const wanted = /^>=(\d+)\.(\d+)$/.exec(manifest.engines?.node ?? "");
const [major, minor] = process.versions.node.split(".").map(Number);
if (wanted && (major < +wanted[1] || (major === +wanted[1] && minor < +wanted[2]))) {
  console.error(
    `Rein needs Node.js ${wanted[1]}.${wanted[2]} or newer (22, 24 or 26); this is v${process.versions.node}. ` +
      "Install a current LTS from https://nodejs.org/ (or run `nvm install 24`), then try again.",
  );
  process.exit(1);
}

const SOURCE = "--conditions=@rein/source";
const built = new URL("../dist/cli/main.js", import.meta.url);
const conditioned = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].some(
  (arg) => arg === SOURCE || arg === "@rein/source",
);
// Sources when the condition is on; else the build; else (a repository without a build) start
// again with the condition.
const sources = conditioned;
if (!conditioned && !existsSync(built)) {
  const again = spawn(
    process.execPath,
    [SOURCE, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { stdio: "inherit" },
  );
  // The child is the real server: a stop signal sent to this process must reach it, or `kill`
  // of the bin's pid would leave the server running without its parent.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"])
    process.on(signal, () => again.kill(signal));
  // Under npm (`npx rein serve`), npm's shell dies on SIGTERM without passing it on: when this
  // process loses its parent, it stops the server as a signal would.
  if (process.env.npm_command) {
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent) again.kill("SIGTERM");
    }, 500).unref();
  }
  const [code, signal] = await new Promise((done) => again.on("exit", (c, s) => done([c, s])));
  process.exit(code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1));
}

// `rein interrupts | head` closes stdout early: that is the reader's choice, not a failure.
process.stdout.on("error", (error) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});
// Inside the repository tsx runs the CLI's own sources. An installed package runs JavaScript;
// a TypeScript `--graphs` module is loaded through tsx either way (src/load-module.ts).
if (sources) (await import("tsx/esm/api")).register();
const { main } = await import(sources ? "../src/cli/main.ts" : built.href);
process.exitCode = await main(process.argv.slice(2));
// `serve` and `worker` have shut down (drained, graph module closed, store closed): a handle that
// something else left open must not keep a stopped process alive.
if (["serve", "worker"].includes(process.argv[2] ?? ""))
  setTimeout(() => {
    process.stderr.write(
      "rein: exiting: a handle the graph module opened still held the process (export a close hook: docs/server.md)\n",
    );
    process.exit();
  }, 3000).unref();
