/**
 * `rein serve --open` in a child process of its own (so the load generator does not share its
 * event loop), on a SQLite file or a Postgres schema, and how to stop it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join, resolve } from "node:path";

/** The repository root (the bench runs the server from `packages/server`). */
export const REPO_ROOT = resolve(import.meta.dirname, "../../..");

/** Where a server keeps its store. */
export type ServerStore =
  { kind: "sqlite"; path: string } | { kind: "postgres"; url: string; schema: string };

/** A running server process. */
export interface ServerProcess {
  url: string;
  pid: number;
  /** Sends SIGTERM (the server drains running work) and waits for the process to exit. */
  stop(): Promise<void>;
}

/** Where the server's test graphs (`ask` among them) are defined. */
export const TEST_GRAPHS = join(REPO_ROOT, "packages/server/src/testing/graphs.ts");

/**
 * Starts `rein serve --open` on an ephemeral port, with the test graphs unless `graphs` names
 * another module; `env` is added to the server's environment.
 */
export function startServer(
  store: ServerStore,
  graphs: string = TEST_GRAPHS,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const storeArgs =
    store.kind === "postgres"
      ? ["--postgres", store.url, "--schema", store.schema]
      : ["--db", store.path];
  const child: ChildProcess = spawn(
    process.execPath,
    [
      // Node options of the server process only, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to
      // profile it under the bench's load (Node refuses `--cpu-prof` in NODE_OPTIONS).
      ...(process.env["REIN_BENCH_SERVER_NODE_ARGS"]?.split(" ").filter(Boolean) ?? []),
      // With the condition on the command line the bin runs the sources in this very process;
      // without it, it would start itself again in a grandchild that a signal to this child
      // would leave running.
      "--conditions=@rein/source",
      join(REPO_ROOT, "packages/server/bin/rein.mjs"),
      "serve",
      "--open",
      "--port",
      "0",
      "--log-level",
      "silent",
      "--graphs",
      graphs,
      ...storeArgs,
    ],
    // The server's stderr (its open-mode warning) is not needed; errors show in the exit code.
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } },
  );
  let errors = "";
  child.stderr?.on("data", (c: Buffer) => {
    errors = (errors + c.toString()).slice(-4000);
  });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  return new Promise((done, fail) => {
    let out = "";
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      const match = /listening on (\S+)/.exec(out);
      if (match?.[1])
        done({
          url: match[1],
          pid: child.pid ?? -1,
          async stop() {
            if (child.exitCode === null) child.kill("SIGTERM");
            await exited;
          },
        });
    });
    child.once("exit", (code) => fail(new Error(`rein serve exited ${code}: ${errors}`)));
  });
}
