// Installs from a lockfile with progress: `npm ci` is silent while it works (and for minutes
// where an install compiles native code, as the bench's better-sqlite3 does), so this prints the
// install scripts as they start, what the compiler is on, and the elapsed time every 15 seconds.
// The full npm output is printed only if the install fails.
import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";

/** True when `dir` has no installed tree, or its lockfile changed since the last install. */
export function needsInstall(dir) {
  const installed = join(dir, "node_modules", ".package-lock.json");
  return (
    !existsSync(installed) ||
    statSync(join(dir, "package-lock.json")).mtimeMs > statSync(installed).mtimeMs
  );
}

/** Runs `npm ci` (plus `extra` arguments) in `dir`, printing progress; rejects on failure. */
export function ci(dir, extra = []) {
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 1000);
  const args = ["ci", "--no-audit", "--no-fund", "--foreground-scripts", ...extra];
  console.log(`[install] npm ${args.join(" ")} in ${dir}`);
  return new Promise((resolve, reject) => {
    const child = spawn("npm", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    let pending = "";
    const onData = (chunk) => {
      output += chunk;
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) {
        const script = /^> (\S+@\S+ \w+)$/.exec(line);
        const compile = /^\s+(?:CC|CXX)\(target\) .*\/([^/]+)\.o$/.exec(line);
        if (script) console.log(`[install] running ${script[1]} (${seconds()}s)`);
        else if (compile) console.log(`[install]   compiling ${compile[1]} (${seconds()}s)`);
        else if (/^\s+SOLINK_MODULE/.test(line)) console.log(`[install]   linking (${seconds()}s)`);
      }
    };
    child.stdout.setEncoding("utf8").on("data", onData);
    child.stderr.setEncoding("utf8").on("data", onData);
    const ticker = setInterval(() => console.log(`[install] ... ${seconds()}s`), 15_000);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearInterval(ticker);
      if (code === 0) {
        console.log(`[install] done in ${seconds()}s`);
        resolve();
      } else {
        console.error(output);
        reject(new Error(`npm ci failed in ${dir} (exit ${code})`));
      }
    });
  });
}
