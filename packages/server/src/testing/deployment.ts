/**
 * A deployment for the production-topology tests: `rein serve` and `rein worker` processes on one
 * Postgres schema (through PgBouncer, across a failover, or from network namespaces), a ledger
 * file the test graphs append their side effects to, and cleanup that runs even when a test fails.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { vi } from "vitest";
import { PostgresSaver } from "@rein/postgres";
import { testSchemaName } from "@rein/postgres/testing";
import { TOKENS } from "./harness.ts";
import { REIN_BIN, TEST_GRAPHS } from "./processes.ts";

/** A spawned `rein` process. */
export interface DeployedProc {
  child: ChildProcess;
  /** The listening URL of `serve` (as printed), else null. */
  url: string | null;
  /** Its stderr so far. */
  log: () => string;
  /** A name for messages (the host it runs on). */
  name: string;
}

/** Where and how one process runs. */
export interface ProcPlacement {
  /** Its store URL; default the deployment's. */
  url?: string;
  /** Its `--listen-url`, if any. */
  listenUrl?: string;
  /** A command the process runs under (`ip netns exec NAME`). */
  prefix?: string[];
  /** `--host` of a server. */
  host?: string;
  /** A name for messages. */
  name?: string;
  /** Extra environment. */
  env?: Record<string, string>;
  /** Extra arguments. */
  args?: string[];
  /** Its `--graphs` module; default the test graphs. */
  graphs?: string;
}

/** Lines of a JSON Lines ledger file. */
export function ledgerLines(file: string): Record<string, string>[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, string>);
}

/** Polls `read` (a failed read counts as not yet) until `done` holds, for up to `ms`. */
export function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 30_000): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await read();
      if (value !== undefined && done(value)) return value;
      throw new Error(`still waiting, last read: ${JSON.stringify(value)}`);
    },
    { timeout: ms, interval: 25 },
  );
}

/** Servers and workers on one schema. */
export class Deployment {
  readonly procs: DeployedProc[] = [];
  readonly dir = mkdtempSync(join(tmpdir(), "rein-deploy-"));
  readonly ledger = join(this.dir, "ledger.jsonl");
  readonly tokens = join(this.dir, "tokens.json");

  constructor(
    /** The URL processes use unless placed otherwise. */
    readonly url: string,
    readonly leaseMs: number,
    readonly schema = testSchemaName(),
  ) {
    writeFileSync(this.tokens, JSON.stringify(Object.values(TOKENS)));
  }

  private launch(args: string[], ready: RegExp, at: ProcPlacement): Promise<DeployedProc> {
    const argv = [
      ...args,
      ...[
        "--postgres",
        at.url ?? this.url,
        "--schema",
        this.schema,
        "--graphs",
        at.graphs ?? TEST_GRAPHS,
      ],
      ...(at.listenUrl ? ["--listen-url", at.listenUrl] : []),
      ...(at.args ?? []),
    ];
    const [command, ...rest] = [...(at.prefix ?? []), process.execPath, REIN_BIN, ...argv];
    const child = spawn(command!, rest, {
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        REIN_LEASE_TTL_MS: String(this.leaseMs),
        REIN_TEST_LEDGER: this.ledger,
        ...at.env,
      },
    });
    let log = "";
    child.stderr?.on("data", (c: Buffer) => (log += c.toString()));
    const name = at.name ?? `${args[0]}-${this.procs.length}`;
    return new Promise((done, fail) => {
      let out = "";
      child.stdout?.on("data", (c: Buffer) => {
        out += c.toString();
        const match = ready.exec(out);
        if (match) {
          const proc = { child, url: match[1] ?? null, log: () => log, name };
          this.procs.push(proc);
          done(proc);
        }
      });
      child.on("exit", (code) => fail(new Error(`${name} exited ${code}: ${log}`)));
    });
  }

  /** A `rein serve` executing up to `concurrency` background runs (0: it only accepts them). */
  serve(concurrency: number, at: ProcPlacement = {}): Promise<DeployedProc> {
    return this.launch(
      [
        "serve",
        ...["--tokens", this.tokens, "--port", "0", "--log-level", "silent"],
        ...["--concurrency", String(concurrency), ...(at.host ? ["--host", at.host] : [])],
      ],
      /listening on (\S+)/,
      at,
    );
  }

  /** A `rein worker`. */
  worker(concurrency: number, at: ProcPlacement = {}): Promise<DeployedProc> {
    return this.launch(["worker", "--concurrency", String(concurrency)], /worker ready/, at);
  }

  /** The ledger's lines so far. */
  charges(): Record<string, string>[] {
    return ledgerLines(this.ledger);
  }

  /** Kills every process (SIGKILL): a test's cleanup, not a shutdown under test. */
  killAll(): void {
    for (const p of this.procs.splice(0)) p.child.kill("SIGKILL");
  }

  /** Kills the processes, drops the schema (through `adminUrl`, if it answers) and the files. */
  async destroy(adminUrl?: string): Promise<void> {
    this.killAll();
    if (adminUrl) {
      const store = new PostgresSaver({ connectionString: adminUrl, schema: this.schema });
      await store.pool
        .query(`DROP SCHEMA IF EXISTS "${this.schema}" CASCADE`)
        .catch(() => undefined);
      await store.close();
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
