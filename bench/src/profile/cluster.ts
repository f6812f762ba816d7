/**
 * A throwaway Postgres cluster for the database profile: `initdb` in a fresh temporary folder,
 * its own port, `pg_stat_statements` preloaded, autovacuum off (so the WAL counted is the
 * workload's), stopped and removed afterwards.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, appendFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A running throwaway cluster. */
export interface Cluster {
  url: string;
  /** Stops the server and removes its data folder. */
  stop(): void;
}

/** The folder of `initdb` and `pg_ctl`: `PG_BIN`, else the newest /usr/lib/postgresql/N/bin. */
function binDir(): string {
  const given = process.env["PG_BIN"];
  if (given) return given;
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb")))
    : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error("initdb not found: set PG_BIN to the folder of initdb and pg_ctl");
  return join(root, newest, "bin");
}

/** initdb refuses to run as root: then it runs as the `postgres` user. */
function run(file: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const [cmd, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", file, ...args]] : [file, args];
  const r = spawnSync(cmd, argv, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${file} ${args.join(" ")}: ${r.stderr || r.stdout}`);
}

/** Creates and starts a cluster on `port`. */
export function startCluster(port: number): Cluster {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), "rein-pgprofile-"));
  chmodSync(dir, 0o777);
  const data = join(dir, "data");
  if (process.getuid?.() === 0) execFileSync("chown", ["postgres", dir]);
  run(join(bin, "initdb"), ["-D", data, "-U", "postgres", "-A", "trust"]);
  appendFileSync(
    join(data, "postgresql.conf"),
    [
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      "shared_preload_libraries = 'pg_stat_statements'",
      "pg_stat_statements.track = all",
      "track_functions = pl",
      "autovacuum = off",
      "max_wal_size = '4GB'",
      "checkpoint_timeout = '1h'",
      "",
    ].join("\n"),
  );
  run(join(bin, "pg_ctl"), ["-D", data, "-l", join(dir, "log"), "-w", "start"]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        run(join(bin, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
