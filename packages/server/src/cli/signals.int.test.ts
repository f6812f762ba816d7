/**
 * Stop signals reach the server through the ways people start it, with real processes: SIGTERM
 * to `npm start`, `npm run demo` and `npx rein serve` stops every process they started (nothing
 * left listening), and `rein serve` and `rein worker` await the graph module's close hook on the
 * way out — the demo's MCP mail server (a child process) no longer keeps a stopped server alive.
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { freePort, probePostgres, testSchemaName } from "@rein/postgres/testing";
import { PostgresSaver } from "@rein/postgres";
import { launchRein, TEST_GRAPHS } from "../testing/processes.ts";

const ROOT = resolve(import.meta.dirname, "../../../..");
const DESK_GRAPHS = join(ROOT, "examples/support-desk/src/graphs.ts");
const probe = await probePostgres();
const dir = mkdtempSync(join(tmpdir(), "rein-signals-"));
const groups: number[] = [];

/** A command started in a process group of its own, with its output so far. */
interface Group {
  child: ChildProcess;
  output: () => string;
}

/** Starts `command` in its own process group; resolves once its output matches `ready`. */
function startGroup(command: string, args: string[], ready: RegExp): Promise<Group> {
  const child = spawn(command, args, {
    cwd: ROOT,
    detached: true,
    // stdin stays open (the interactive demo waits on it).
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, REIN_DESK_DATA: join(dir, "desk"), NO_COLOR: "1" },
  });
  groups.push(child.pid!);
  let output = "";
  const seen = (c: Buffer): void => void (output += c.toString());
  child.stdout?.on("data", seen);
  child.stderr?.on("data", seen);
  return vi.waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${output}`);
      if (!ready.test(output)) throw new Error(`not ready: ${output.slice(-300)}`);
      return { child, output: () => output };
    },
    { timeout: 90_000, interval: 100 },
  );
}

/** The processes still alive in a process group. */
function members(pgid: number): string[] {
  try {
    return execFileSync("ps", ["-o", "pid=,args=", "-g", String(pgid)], { encoding: "utf8" })
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean);
  } catch {
    return []; // ps exits 1 when the group is empty
  }
}

/** Whether something accepts connections on a port of 127.0.0.1. */
function listening(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      done(true);
    });
    socket.once("error", () => done(false));
  });
}

/** SIGTERM to the group's leader only (as a process manager sends it); every member ends. */
async function terminateLeader(group: Group, port: number | null): Promise<void> {
  const pgid = group.child.pid!;
  process.kill(pgid, "SIGTERM");
  await vi.waitFor(
    () => {
      const left = members(pgid);
      if (left.length > 0) throw new Error(`still running:\n${left.join("\n")}`);
    },
    { timeout: 20_000, interval: 200 },
  );
  if (port !== null) expect(await listening(port)).toBe(false);
}

afterAll(() => {
  for (const pgid of groups)
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // Already gone.
    }
  rmSync(dir, { recursive: true, force: true });
});

describe("stop signals through npm and npx", { timeout: 150_000 }, () => {
  it("SIGTERM to `npm start` stops `rein serve`: it drains, closes the graph module, and nothing listens", async () => {
    const port = await freePort();
    const group = await startGroup(
      "npm",
      ["start", "--", "--port", String(port), "--db", join(dir, "start.db")],
      /Press Ctrl\+C to stop/,
    );
    expect(await listening(port)).toBe(true);
    await terminateLeader(group, port);
    expect(group.output()).toContain("rein serve: stopped");
    expect(group.output()).toContain("rein serve: the graph module closed");
  });

  it("SIGTERM to `npx rein serve` with the desk's MCP mail server running stops it, and the mail server", async () => {
    const port = await freePort();
    const group = await startGroup(
      "npx",
      ["rein", "serve", "--open", "--db", join(dir, "npx.db"), "--graphs", DESK_GRAPHS].concat([
        "--port",
        String(port),
        "--log-level",
        "silent",
      ]),
      /listening on/,
    );
    // A desk thread whose email sub-agent reaches its MCP tools: the mail server is started.
    const api = (path: string, body: unknown): Promise<Response> =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await api("/threads", { graph: "support-desk", threadId: "t" })).status).toBe(201);
    expect((await api("/threads/t/runs", { input: {}, wait: true })).status).toBe(200);
    expect((await api("/threads/t/resume", { resume: { type: "accept" } })).status).toBe(200);
    expect(members(group.child.pid!).some((p) => p.includes("mail-server.ts"))).toBe(true);
    await terminateLeader(group, port);
    expect(group.output()).toContain("rein serve: the graph module closed");
    expect(group.output()).not.toContain("a handle the graph module opened");
  });

  it("SIGTERM to `npm run demo` (waiting for a person) ends it", async () => {
    const group = await startGroup(
      "npm",
      ["run", "demo", "--", "--interactive", "--data", join(dir, "demo")],
      /Your name/,
    );
    await terminateLeader(group, null);
  });
});

describe("graph module close hooks", { timeout: 60_000 }, () => {
  const closed = join(dir, "closed.txt");
  const closes = (): string[] =>
    existsSync(closed) ? readFileSync(closed, "utf8").split("\n").filter(Boolean) : [];

  it("`rein serve` awaits the module's close() on SIGTERM and exits 0", async () => {
    const serve = await launchRein(
      ["serve", "--open", "--db", join(dir, "hook.db"), "--graphs", TEST_GRAPHS, "--port", "0"],
      /listening on (\S+)/,
      { REIN_TEST_CLOSED: closed },
    );
    const before = closes().length;
    const exit = new Promise<number | null>((done) => serve.child.once("exit", done));
    serve.child.kill("SIGTERM");
    expect(await exit).toBe(0);
    expect(closes()).toHaveLength(before + 1);
    expect(serve.log()).toMatch(/SIGTERM: shutting down[\s\S]*graph module closed[\s\S]*stopped/);
  });

  it.skipIf(!probe.available)(
    "`rein worker` awaits the module's close() on SIGTERM and exits 0",
    async () => {
      const schema = testSchemaName();
      const worker = await launchRein(
        ["worker", "--postgres", probe.url, "--schema", schema, "--graphs", TEST_GRAPHS],
        /worker ready/,
        { REIN_TEST_CLOSED: closed },
      );
      const before = closes().length;
      const exit = new Promise<number | null>((done) => worker.child.once("exit", done));
      worker.child.kill("SIGTERM");
      expect(await exit).toBe(0);
      expect(closes()).toHaveLength(before + 1);
      const store = await PostgresSaver.connect({ connectionString: probe.url, schema });
      await store.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await store.close();
    },
  );
});
