/**
 * `npm start` as a user runs it, over real processes: the server's JSON log lines go to the log
 * file its summary names, so none interleaves with what the demo prints on the terminal.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";

const scratch = mkdtempSync(join(tmpdir(), "rein-serve-log-"));
let child: ChildProcess | null = null;
afterAll(async () => {
  const running = child;
  if (running && running.exitCode === null) {
    const exited = new Promise((done) => running.once("exit", done));
    running.kill("SIGTERM");
    await exited;
  }
  rmSync(scratch, { recursive: true, force: true });
}, 30_000);

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, "127.0.0.1", done));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}

/** Lines a JSON logger (pino) writes: an object with a numeric level. */
const jsonLogLines = (text: string): string[] =>
  text.split("\n").filter((line) => /^\{.*"level":\d+/.test(line.trim()));

describe("npm start's terminal", () => {
  it("shows no JSON log line: the server's log goes to the file the summary names", async () => {
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
    const serve = fileURLToPath(new URL("./serve.ts", import.meta.url));
    const port = await freePort();
    const db = join(scratch, "desk.db");
    // Info level: every request is logged, so a log line reaching the terminal cannot hide.
    const started = spawn(
      process.execPath,
      [
        "--import",
        tsx,
        "--conditions=@rein/source",
        serve,
        ...["--port", String(port), "--db", db, "--threads", "1", "--log-level", "info"],
      ],
      { cwd: resolve(import.meta.dirname, "../../.."), stdio: ["ignore", "pipe", "pipe"] },
    );
    child = started;
    let out = "";
    let err = "";
    started.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
    started.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString()));
    await vi.waitFor(
      () => {
        if (!out.includes("Press Ctrl+C to stop") && started.exitCode === null)
          throw new Error("no summary yet");
      },
      { timeout: 45_000, interval: 100 },
    );
    expect(out, err).toContain("Press Ctrl+C to stop");
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);

    const logFile = /Log: +(\S+)/.exec(out)?.[1] ?? "";
    expect(logFile).toBe(join(scratch, "rein-serve.log"));
    await vi.waitFor(() => expect(readFileSync(logFile, "utf8")).toContain('"url":"/healthz"'), {
      timeout: 5_000,
    });
    expect(jsonLogLines(readFileSync(logFile, "utf8")).length).toBeGreaterThan(0);
    expect(jsonLogLines(out)).toEqual([]);
    expect(jsonLogLines(err)).toEqual([]);
  }, 60_000);
});
