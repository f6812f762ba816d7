/**
 * A throwaway PostgreSQL cluster for fault tests: its own data directory under a temp dir, its
 * own port, started and stopped by the test with `initdb`/`pg_ctl` — so a test can take the
 * database away mid-answer without touching the shared test server.
 */
import { execFileSync } from "node:child_process";
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The newest `/usr/lib/postgresql/<version>/bin` holding initdb and pg_ctl, or null. */
export function findPostgresBin(root = "/usr/lib/postgresql"): string | null {
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter(
      (v) =>
        existsSync(join(root, v, "bin", "initdb")) && existsSync(join(root, v, "bin", "pg_ctl")),
    )
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], "bin") : null;
}

/** Why a throwaway cluster cannot be made here, or null when it can. */
export function clusterUnavailableReason(): string | null {
  if (!findPostgresBin()) return "initdb/pg_ctl not found under /usr/lib/postgresql/*/bin";
  if (process.getuid?.() === 0 && postgresUser() === null)
    return "running as root and there is no `postgres` user to run initdb as";
  return null;
}

/** The uid and gid of the `postgres` user, which servers started by a root test run as. */
export function postgresUser(): { uid: number; gid: number } | null {
  try {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    return { uid, gid };
  } catch {
    return null;
  }
}

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A free TCP port on 127.0.0.1 among `from`..`to` (for tests given a range of their own). */
export async function freePortIn(from: number, to: number): Promise<number> {
  for (let port = from; port <= to; port++) {
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error(`no free port in ${from}..${to}`);
}

/** Options of {@link ThrowawayCluster.create}. */
export interface ClusterOptions {
  /** Its port; default: one the kernel says is free. */
  port?: number;
  /** The addresses it listens on (`listen_addresses`); default `127.0.0.1`. */
  listen?: string;
  /** Server settings given at start (`-c name=value`), e.g. `synchronous_standby_names`. */
  settings?: Record<string, string>;
}

/** A cluster in its own directory on its own port. */
export class ThrowawayCluster {
  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
    private readonly options: ClusterOptions = {},
  ) {}

  /** Runs `initdb` in a fresh temp dir (as the `postgres` user when the test runs as root). */
  static async create(options: ClusterOptions = {}): Promise<ThrowawayCluster> {
    const bin = findPostgresBin();
    if (!bin) throw new Error("initdb not found");
    const dir = mkdtempSync(join(tmpdir(), "rein-pg-cluster-"));
    const owner = process.getuid?.() === 0 ? postgresUser() : null;
    if (owner) chownSync(dir, owner.uid, owner.gid);
    const port = options.port ?? (await freePort());
    const cluster = new ThrowawayCluster(dir, port, bin, options);
    cluster.run("initdb", [
      "-D",
      cluster.data,
      "-U",
      "postgres",
      "--auth=trust",
      "-E",
      "UTF8",
      "--no-sync",
    ]);
    return cluster;
  }

  /**
   * A streaming replica of `primary` (which must run): `pg_basebackup -R` into a fresh directory,
   * not started.
   */
  static async replicaOf(
    primary: ThrowawayCluster,
    options: ClusterOptions = {},
  ): Promise<ThrowawayCluster> {
    const bin = findPostgresBin();
    if (!bin) throw new Error("pg_basebackup not found");
    const dir = mkdtempSync(join(tmpdir(), "rein-pg-replica-"));
    const owner = process.getuid?.() === 0 ? postgresUser() : null;
    if (owner) chownSync(dir, owner.uid, owner.gid);
    const port = options.port ?? (await freePort());
    const replica = new ThrowawayCluster(dir, port, bin, options);
    replica.run("pg_basebackup", [
      ...["-D", replica.data, "-h", "127.0.0.1", "-p", String(primary.port), "-U", "postgres"],
      ...[
        "-R",
        "-X",
        "stream",
        "-d",
        `host=127.0.0.1 port=${primary.port} user=postgres application_name=replica`,
      ],
    ]);
    return replica;
  }

  /** Lets clients from `cidr` connect without a password (a line in pg_hba.conf; before start). */
  trust(cidr: string): void {
    appendFileSync(join(this.data, "pg_hba.conf"), `host all all ${cidr} trust\n`);
  }

  /** Promotes a replica to primary and waits until it accepts writes. */
  promote(): void {
    this.run("pg_ctl", ["-D", this.data, "-w", "promote"]);
  }

  /** The data directory. */
  get data(): string {
    return join(this.dir, "data");
  }

  /** Connection URL of the cluster's `postgres` database. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** Starts the server and waits until it accepts connections. */
  start(): void {
    this.run("pg_ctl", [
      "-D",
      this.data,
      "-l",
      join(this.dir, "server.log"),
      "-w",
      "-o",
      [
        `-p ${this.port} -k ${this.dir} -c listen_addresses=${this.options.listen ?? "127.0.0.1"}`,
        "-c fsync=off",
        ...Object.entries(this.options.settings ?? {}).map(([k, v]) => `-c ${k}=${v}`),
      ].join(" "),
      "start",
    ]);
  }

  /** Whether the server runs (`pg_ctl status`). */
  running(): boolean {
    try {
      this.run("pg_ctl", ["-D", this.data, "status"]);
      return true;
    } catch {
      return false;
    }
  }

  /** Starts the server unless it runs (a test that failed midway may have left it stopped). */
  ensureStarted(): void {
    if (!this.running()) this.start();
  }

  /** Stops the server: `immediate` drops every connection at once, as a crash or failover does. */
  stop(mode: "fast" | "immediate" = "immediate"): void {
    this.run("pg_ctl", ["-D", this.data, "-w", "-m", mode, "stop"]);
  }

  /** Stops the server if it runs and deletes its directory. */
  destroy(): void {
    try {
      this.stop("immediate");
    } catch {
      // Already stopped.
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private run(tool: string, args: string[]): void {
    const path = join(this.bin, tool);
    const asPostgres = process.getuid?.() === 0;
    const [command, argv] = asPostgres
      ? ["runuser", ["-u", "postgres", "--", path, ...args]]
      : [path, args];
    execFileSync(command, argv, { stdio: ["ignore", "pipe", "pipe"], cwd: this.dir });
  }
}
