/**
 * A throwaway PgBouncer in transaction mode in front of a test cluster: Debian's `pgbouncer`
 * binary, its own config, port and directory, started and stopped by the test — so the store and
 * the processes can be tested through the pooler most hosted Postgres puts in front.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { postgresUser } from "./cluster.ts";

/** Where Debian installs the binary. */
const BINARIES = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"];

/** The pgbouncer binary, or null when it is not installed. */
export function findPgBouncer(): string | null {
  return BINARIES.find((path) => existsSync(path)) ?? null;
}

/** Why a throwaway PgBouncer cannot be started here, or null when it can. */
export function bouncerUnavailableReason(): string | null {
  if (!findPgBouncer()) return "pgbouncer is not installed (apt-get install pgbouncer)";
  if (process.getuid?.() === 0 && postgresUser() === null)
    return "running as root (PgBouncer refuses to) and there is no `postgres` user to run it as";
  return null;
}

/**
 * The settings a deployment's PgBouncer needs for Rein, as docs/guides/postgres.md lists them:
 * transaction pooling, and the pool sizes given. The server pool is kept small on purpose in
 * tests, so consecutive transactions of one client land on different server connections.
 */
export function bouncerConfig(settings: {
  port: number;
  dir: string;
  serverHost: string;
  serverPort: number;
  poolSize: number;
}): string {
  return `[databases]
* = host=${settings.serverHost} port=${settings.serverPort}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${settings.port}
unix_socket_dir =
auth_type = trust
auth_file = ${join(settings.dir, "userlist.txt")}
pool_mode = transaction
default_pool_size = ${settings.poolSize}
max_client_conn = 500
server_reset_query =
ignore_startup_parameters = extra_float_digits,options
logfile = ${join(settings.dir, "pgbouncer.log")}
pidfile = ${join(settings.dir, "pgbouncer.pid")}
`;
}

/** A PgBouncer process on its own port. */
export class ThrowawayBouncer {
  private child: ChildProcess | null = null;

  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  /**
   * Writes the config for a bouncer on `port` in front of `127.0.0.1:serverPort` and starts it
   * (as the `postgres` user when the test runs as root); resolves once it accepts connections.
   */
  static async start(options: {
    port: number;
    serverPort: number;
    serverHost?: string;
    poolSize?: number;
  }): Promise<ThrowawayBouncer> {
    const binary = findPgBouncer();
    if (!binary) throw new Error("pgbouncer not found");
    const dir = mkdtempSync(join(tmpdir(), "rein-pgbouncer-"));
    const bouncer = new ThrowawayBouncer(dir, options.port);
    writeFileSync(join(dir, "userlist.txt"), '"postgres" ""\n');
    writeFileSync(
      join(dir, "pgbouncer.ini"),
      bouncerConfig({
        port: options.port,
        dir,
        serverHost: options.serverHost ?? "127.0.0.1",
        serverPort: options.serverPort,
        poolSize: options.poolSize ?? 4,
      }),
    );
    const owner = process.getuid?.() === 0 ? postgresUser() : null;
    if (owner)
      for (const path of ["", "userlist.txt", "pgbouncer.ini"])
        chownSync(join(dir, path), owner.uid, owner.gid);
    const [command, argv] = owner
      ? ["runuser", ["-u", "postgres", "--", binary, join(dir, "pgbouncer.ini")]]
      : [binary, [join(dir, "pgbouncer.ini")]];
    bouncer.child = spawn(command, argv, { stdio: "ignore" });
    await bouncer.ready();
    return bouncer;
  }

  /** Connection URL of the cluster's `postgres` database through the bouncer, marked pooled. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres?pgbouncer=true`;
  }

  /** The bouncer's log so far (for failure messages). */
  log(): string {
    const file = join(this.dir, "pgbouncer.log");
    return existsSync(file) ? readFileSync(file, "utf8") : "";
  }

  private async ready(): Promise<void> {
    for (let attempt = 0; attempt < 100; attempt++) {
      if (this.child?.exitCode !== null)
        throw new Error(`pgbouncer exited ${this.child?.exitCode}: ${this.log()}`);
      const open = await new Promise<boolean>((resolve) => {
        const socket = connect(this.port, "127.0.0.1");
        socket.once("connect", () => {
          socket.destroy();
          resolve(true);
        });
        socket.once("error", () => resolve(false));
      });
      if (open) return;
      await sleep(50);
    }
    throw new Error(`pgbouncer did not listen on ${this.port}: ${this.log()}`);
  }

  /** Stops the bouncer and deletes its directory. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      // The child is `runuser` when run as root: signal the bouncer by its pid file too.
      try {
        const pid = Number(readFileSync(join(this.dir, "pgbouncer.pid"), "utf8").trim());
        if (pid > 0) process.kill(pid, "SIGINT");
      } catch {
        child.kill("SIGINT");
      }
      await Promise.race([exited, sleep(3000)]);
      if (child.exitCode === null) child.kill("SIGKILL");
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
