/**
 * The four servers of the protocol comparison, each in a process of its own, all serving the
 * graphs `refund` and `fanout` to the same SDK client: LangGraph's `langgraph dev` (in memory),
 * LangGraph's embed server on Postgres (`embed-server.ts`), and `rein serve` on SQLite and on
 * Postgres with its LangGraph-protocol layer at `/langgraph`. Each server's graphs record their
 * asking nodes' executions in a file of their own (`executions.ts`).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import pg from "pg";
import { createFreshDatabase } from "../harness/postgres.ts";
import { cpuMs, CpuMeter, withApplicationName, type CpuUse } from "../load/cpu.ts";
import { REPO_ROOT, startServer } from "../load/server.ts";
import { EXECUTIONS_ENV } from "./executions.ts";

/** The systems compared, in the table's column order. */
export const SYSTEMS = [
  "langgraph-dev",
  "langgraph-postgres",
  "rein-sqlite",
  "rein-postgres",
] as const;

/** One of {@link SYSTEMS}. */
export type SystemName = (typeof SYSTEMS)[number];

/** Where Rein's LangGraph-protocol layer is mounted (the SDK's `apiUrl` is the server's URL + this). */
export const REIN_PROTOCOL_PREFIX = "/langgraph";

/** A running server, as the bench drives and measures it. */
export interface ProtocolServer {
  system: SystemName;
  /** What the SDK `Client` takes as `apiUrl`. */
  apiUrl: string;
  /** The file the graphs append their asking nodes' executions to. */
  executions: string;
  /** Starts measuring the CPU of the server process (and its Postgres backends). */
  meter(): Promise<{ stop(): Promise<CpuUse> }>;
  stop(): Promise<void>;
}

const BENCH_ROOT = join(REPO_ROOT, "bench");
const LANGGRAPH_GRAPHS = join(BENCH_ROOT, "src/protocol/graphs.langgraph.ts");
const REIN_GRAPHS = join(BENCH_ROOT, "src/protocol/graphs.rein.ts");

/** A free TCP port on loopback (the LangGraph servers take a port, not 0). */
async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => done(port));
    });
  });
}

/** Child pids of `pid` (all its threads), from `/proc`. */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8")
        .split(" ")
        .filter(Boolean)
        .map(Number),
    );
  } catch {
    return [];
  }
}

/** `pid` and all its descendants. */
function processTree(pid: number): number[] {
  return [pid, ...childrenOf(pid).flatMap(processTree)];
}

/** CPU ms so far of `pid` and its descendants (processes gone are not counted). */
function treeCpuMs(pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + (cpuMs(p) ?? 0), 0);
}

/**
 * Measures a server's process tree and its Postgres backends: `langgraph dev` runs the server
 * two processes below the CLI (the CLI, tsx's wrapper, the server), and servers that load
 * TypeScript graphs keep an esbuild service as a child; all of it is the server's cost.
 */
async function treeMeter(
  pid: number,
  backends: { client: pg.Client; application: string } | null,
): Promise<{ stop(): Promise<CpuUse> }> {
  const meter = new CpuMeter(pid, backends);
  const before = treeCpuMs(pid);
  await meter.start();
  return {
    async stop() {
      const { backends: used } = await meter.stop();
      return { server: treeCpuMs(pid) - before, backends: used };
    },
  };
}

/**
 * Polls `url` until it answers (200, or any status when `anyStatus`), or fails after `timeoutMs`
 * or when `child` exits.
 */
async function waitUntilServing(
  url: string,
  child: ChildProcess,
  log: () => string,
  anyStatus = false,
  timeoutMs = 180_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}: ${log()}`);
    try {
      const response = await fetch(url);
      await response.body?.cancel();
      if (response.ok || anyStatus) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`server at ${url} did not answer within ${timeoutMs} ms: ${log()}`);
}

/** Spawns a child with its output kept (the tail of stderr and stdout) for error messages. */
function spawnKept(command: string, args: string[], env: Record<string, string>, cwd?: string) {
  const child = spawn(command, args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
    ...(cwd ? { cwd } : {}),
  });
  let tail = "";
  const keep = (c: Buffer) => {
    tail = (tail + c.toString()).slice(-4000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  return {
    child,
    log: () => tail,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A scratch folder with the executions file. */
function scratch(system: SystemName): { dir: string; executions: string } {
  const dir = mkdtempSync(join(tmpdir(), `bench-${system}-`));
  return { dir, executions: join(dir, "executions.log") };
}

/**
 * `langgraph dev` (`@langchain/langgraph-cli`), in memory, without browser or reload, its
 * default ten workers, logging at `warn` (Rein's server runs silent): a project folder in a
 * scratch directory whose `langgraph.json` names the bench's graphs.
 */
export async function startLangGraphDev(): Promise<ProtocolServer> {
  const { dir, executions } = scratch("langgraph-dev");
  const graphs = `./${relative(dir, LANGGRAPH_GRAPHS)}`;
  writeFileSync(
    join(dir, "langgraph.json"),
    JSON.stringify({
      node_version: "22",
      graphs: { refund: `${graphs}:refund`, fanout: `${graphs}:fanout` },
    }),
  );
  const port = await freePort();
  const cli = join(BENCH_ROOT, "node_modules/@langchain/langgraph-cli/dist/cli/cli.mjs");
  const proc = spawnKept(
    process.execPath,
    [
      cli,
      "dev",
      "--no-browser",
      "--no-reload",
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "--config",
      join(dir, "langgraph.json"),
    ],
    {
      [EXECUTIONS_ENV]: executions,
      LANGGRAPH_CLI_NO_ANALYTICS: "1",
      BROWSER: "none",
      LOG_LEVEL: "warn",
      LANGSMITH_TRACING: "false",
    },
    dir,
  );
  const apiUrl = `http://127.0.0.1:${port}`;
  await waitUntilServing(`${apiUrl}/info`, proc.child, proc.log);
  const pid = proc.child.pid ?? -1;
  return {
    system: "langgraph-dev",
    apiUrl,
    executions,
    meter: () => treeMeter(pid, null),
    stop: () => proc.stop(),
  };
}

/** Connection for polling a server's Postgres backends, and how to close it. */
async function backendsOf(url: string, application: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return { client, application };
}

/** LangGraph's embed server on a fresh Postgres database (`embed-server.ts`). */
export async function startLangGraphPostgres(adminUrl: string): Promise<ProtocolServer> {
  const { executions } = scratch("langgraph-postgres");
  const db = await createFreshDatabase(adminUrl, "lg_embed");
  const application = `bench-lg-embed-${process.pid}`;
  const port = await freePort();
  const proc = spawnKept(
    process.execPath,
    [
      join(BENCH_ROOT, "node_modules/tsx/dist/cli.mjs"),
      join(BENCH_ROOT, "src/protocol/embed-server.ts"),
      withApplicationName(db.url, application),
      String(port),
    ],
    { [EXECUTIONS_ENV]: executions, LANGSMITH_TRACING: "false" },
  );
  const apiUrl = `http://127.0.0.1:${port}`;
  try {
    // The embed server has no `/info`; it listens once its tables exist, so any answer will do.
    await waitUntilServing(`${apiUrl}/info`, proc.child, proc.log, true);
  } catch (error) {
    await proc.stop();
    await db.drop();
    throw error;
  }
  const pid = proc.child.pid ?? -1;
  const backends = await backendsOf(db.url, application);
  return {
    system: "langgraph-postgres",
    apiUrl,
    executions,
    meter: () => treeMeter(pid, backends),
    async stop() {
      await proc.stop();
      await backends.client.end();
      await db.drop();
    },
  };
}

/** `rein serve --open` with the bench's Rein graphs, on SQLite or on a fresh Postgres database. */
export async function startRein(
  store: "sqlite" | "postgres",
  adminUrl?: string,
): Promise<ProtocolServer> {
  const system: SystemName = store === "sqlite" ? "rein-sqlite" : "rein-postgres";
  const { dir, executions } = scratch(system);
  const env = { [EXECUTIONS_ENV]: executions };
  if (store === "sqlite") {
    const server = await startServer(
      { kind: "sqlite", path: join(dir, "rein.db") },
      REIN_GRAPHS,
      env,
    );
    return {
      system,
      apiUrl: `${server.url}${REIN_PROTOCOL_PREFIX}`,
      executions,
      meter: () => treeMeter(server.pid, null),
      stop: () => server.stop(),
    };
  }
  if (!adminUrl) throw new Error("rein-postgres needs a Postgres URL");
  const db = await createFreshDatabase(adminUrl, "rein_protocol");
  const application = `bench-rein-protocol-${process.pid}`;
  const server = await startServer(
    { kind: "postgres", url: withApplicationName(db.url, application), schema: "rein" },
    REIN_GRAPHS,
    env,
  ).catch(async (error: unknown) => {
    await db.drop();
    throw error;
  });
  const backends = await backendsOf(db.url, application);
  return {
    system,
    apiUrl: `${server.url}${REIN_PROTOCOL_PREFIX}`,
    executions,
    meter: () => treeMeter(server.pid, backends),
    async stop() {
      await server.stop();
      await backends.client.end();
      await db.drop();
    },
  };
}
