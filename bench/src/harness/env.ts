/**
 * What a results file must say about where it was measured: machine, Node, package versions,
 * database versions, and the Rein commit.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cpus, loadavg, release, totalmem, type } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { PostgresTarget } from "./postgres.ts";
import { openSqlite, value } from "./sqlite.ts";

/** The bench package directory. */
export const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Packages whose versions the results name. */
const PACKAGES = [
  "@langchain/langgraph",
  "@langchain/langgraph-checkpoint",
  "@langchain/langgraph-checkpoint-sqlite",
  "@langchain/langgraph-checkpoint-postgres",
  "@langchain/core",
  "@rein/core",
  "@rein/sqlite",
  "@rein/postgres",
  "better-sqlite3",
  "pg",
] as const;

/** The environment of a run. */
export interface Environment {
  date: string;
  machine: string;
  cpus: string;
  memory: string;
  /** 1-minute load average when the run started (other work on the machine skews timings). */
  load: string;
  node: string;
  packages: Record<string, string>;
  sqlite: string;
  postgres: string;
  reinCommit: string;
}

/** Version of an installed package, looked up in the bench's and the root's `node_modules`. */
export function packageVersion(name: string): string {
  for (const base of [join(BENCH_DIR, "node_modules"), join(BENCH_DIR, "..", "node_modules")]) {
    const file = join(base, name, "package.json");
    if (existsSync(file))
      return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
  }
  return "not installed";
}

function gitCommit(): string {
  try {
    const hash = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: BENCH_DIR,
      encoding: "utf8",
    }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "../packages"], {
      cwd: BENCH_DIR,
      encoding: "utf8",
    }).trim();
    return dirty ? `${hash} (with uncommitted changes in packages/)` : hash;
  } catch {
    return "unknown";
  }
}

async function postgresVersion(target: PostgresTarget): Promise<string> {
  if (!target.ok) return `skipped: ${target.reason}`;
  const client = new pg.Client({ connectionString: target.url });
  await client.connect();
  try {
    const r = await client.query<{ server_version: string }>("SHOW server_version");
    return `PostgreSQL ${r.rows[0]?.server_version ?? "?"} (${new URL(target.url).host})`;
  } finally {
    await client.end();
  }
}

/** Collects the environment of this run. */
export async function describeEnvironment(target: PostgresTarget): Promise<Environment> {
  const cpu = cpus();
  const db = openSqlite(":memory:");
  const sqlite = value<string>(db, "SELECT sqlite_version() AS v") ?? "?";
  db.close();
  return {
    date: new Date().toISOString(),
    machine: `${type()} ${release()}`,
    cpus: `${cpu.length} × ${cpu[0]?.model ?? "unknown"}`,
    memory: `${Math.round(totalmem() / 2 ** 30)} GiB`,
    load: loadavg()[0]?.toFixed(2) ?? "?",
    node: process.version,
    packages: Object.fromEntries(PACKAGES.map((p) => [p, packageVersion(p)])),
    sqlite: `SQLite ${sqlite}`,
    postgres: await postgresVersion(target),
    reinCommit: gitCommit(),
  };
}
