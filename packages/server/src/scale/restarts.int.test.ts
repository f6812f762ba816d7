/**
 * Processes outlive their database's bad minutes: an idle `rein worker` (no metrics port, so
 * nothing but Postgres connections keeps its event loop busy) and an accept-only `rein serve`, as
 * real processes on a throwaway cluster, stay up while the cluster is stopped (`-m fast`, then
 * `-m immediate`) and while their connections are terminated (`pg_terminate_backend`), then
 * complete new work: the server accepts a run and the worker executes it, once.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { clusterUnavailableReason, testSchemaName, ThrowawayCluster } from "@rein/postgres/testing";
import { TOKENS } from "../testing/harness.ts";
import { launchRein, TEST_GRAPHS, type Proc } from "../testing/processes.ts";

const noCluster = clusterUnavailableReason();
if (noCluster) console.warn(`Postgres restart suites skipped: ${noCluster}`);
const token = TOKENS["alice"]!.token;

/** Whether a spawned process is still running. */
function alive(p: Proc): boolean {
  return p.child.exitCode === null && p.child.signalCode === null;
}

describe.skipIf(noCluster !== null)(
  "serve and worker outlive Postgres restarts and terminated connections",
  { timeout: 120_000 },
  () => {
    let cluster: ThrowawayCluster;
    const dir = mkdtempSync(join(tmpdir(), "rein-restarts-"));
    const ledger = join(dir, "ledger.jsonl");
    const schema = testSchemaName();
    const procs: Proc[] = [];
    let server: Proc;
    let worker: Proc;

    beforeAll(async () => {
      cluster = await ThrowawayCluster.create();
      cluster.start();
      writeFileSync(join(dir, "tokens.json"), JSON.stringify(Object.values(TOKENS)));
      const env = { REIN_LEASE_TTL_MS: "2000", REIN_TEST_LEDGER: ledger };
      const common = ["--postgres", cluster.url, "--schema", schema, "--graphs", TEST_GRAPHS];
      server = await launchRein(
        [
          "serve",
          ...common,
          ...["--tokens", join(dir, "tokens.json"), "--port", "0", "--log-level", "silent"],
          ...["--concurrency", "0"],
        ],
        /listening on (\S+)/,
        env,
      );
      procs.push(server);
      worker = await launchRein(["worker", ...common, "--concurrency", "2"], /worker ready/, env);
      procs.push(worker);
    }, 60_000);

    afterAll(() => {
      for (const p of procs) p.child.kill("SIGKILL");
      cluster?.destroy();
      rmSync(dir, { recursive: true, force: true });
    });

    /** Charges recorded for a tag. */
    const charges = (tag: string): number =>
      existsSync(ledger)
        ? readFileSync(ledger, "utf8")
            .split("\n")
            .filter((line) => line.includes(`"tag":"${tag}"`)).length
        : 0;

    /** Sends a request to the server, retrying while Postgres is still coming back (503). */
    async function call(method: string, path: string, body?: unknown): Promise<Response> {
      return vi.waitFor(
        async () => {
          const response = await fetch(`${server.url}${path}`, {
            method,
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });
          if (response.status === 503) throw new Error("503");
          return response;
        },
        { timeout: 20_000, interval: 200 },
      );
    }

    /** A new thread and a background run on it, executed by the worker to its end, charged once. */
    async function completesNewWork(tag: string): Promise<void> {
      expect((await call("POST", "/threads", { graph: "ledger", threadId: tag })).status).toBe(201);
      const accepted = await call("POST", `/threads/${tag}/runs`, { input: { tag } });
      expect(accepted.status).toBe(202);
      const { runId } = (await accepted.json()) as { runId: string };
      await vi.waitFor(
        async () => {
          const run = (await (await call("GET", `/threads/${tag}/runs/${runId}`)).json()) as {
            status: string;
          };
          if (run.status !== "done") throw new Error(`run ${run.status}`);
        },
        { timeout: 20_000, interval: 100 },
      );
      expect(charges(tag)).toBe(1);
    }

    /** Both processes still run, with their stderr as the message when one does not. */
    function expectAlive(after: string): void {
      expect(
        alive(worker),
        `worker exited ${worker.child.exitCode} after ${after}: ${worker.log()}`,
      ).toBe(true);
      expect(
        alive(server),
        `server exited ${server.child.exitCode} after ${after}: ${server.log()}`,
      ).toBe(true);
    }

    /** `GET /readyz` of the server: its status and body. */
    async function readyz(): Promise<{
      status: number;
      ready: boolean;
      reason: string | null;
      checks: { name: string }[];
    }> {
      const response = await fetch(`${server.url}/readyz`);
      const body = (await response.json()) as {
        ready: boolean;
        reason: string | null;
        checks: { name: string }[];
      };
      return { status: response.status, ...body };
    }

    /** Waits until `/readyz` answers 200. */
    const becomesReady = (): Promise<void> =>
      vi.waitFor(
        async () => {
          const r = await readyz();
          if (r.status !== 200) throw new Error(`readyz ${r.status}: ${r.reason}`);
        },
        { timeout: 20_000, interval: 100 },
      );

    it("stay up through a fast stop and an immediate stop of the cluster, then complete new work; /readyz follows the database", async () => {
      await completesNewWork("before");
      const ready = await readyz();
      expect(ready).toMatchObject({ status: 200, ready: true, reason: null });
      expect(ready.checks.map((c) => c.name)).toEqual(["store", "migrations", "listener"]);
      for (const mode of ["fast", "immediate"] as const) {
        cluster.stop(mode);
        // The worker used to exit within a second of its connections closing (code 13).
        await sleep(2_500);
        expectAlive(`pg_ctl stop -m ${mode}`);
        // Not ready while the database is away, and it says why; alive all the same.
        const away = await readyz();
        expect(away.status).toBe(503);
        expect(away.reason).toMatch(/store does not answer/);
        expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
        cluster.start();
        await becomesReady();
        await completesNewWork(`after-${mode}`);
        expectAlive(`the cluster came back from -m ${mode}`);
      }
      // The reconnects are logged.
      expect(worker.log()).toMatch(/listener.*lost/i);
      expect(worker.log()).toMatch(/listener.*reconnected/i);
    });

    it("/readyz is 503 while the schema lacks a migration this server needs, and 200 once it has it", async () => {
      cluster.ensureStarted();
      await becomesReady();
      const admin = new pg.Client({ connectionString: cluster.url });
      await admin.connect();
      const table = `"${schema}".schema_migrations`;
      const hide = `UPDATE ${table} SET version = -version WHERE version = (SELECT max(version) FROM ${table})`;
      try {
        await admin.query(hide);
        const behind = await readyz();
        expect(behind.status).toBe(503);
        expect(behind.reason).toMatch(/migrations are not applied/);
      } finally {
        await admin.query(`UPDATE ${table} SET version = -version WHERE version < 0`);
        await admin.end();
      }
      await becomesReady();
    });

    it("stay up when every connection is terminated by pg_terminate_backend, then complete new work", async () => {
      cluster.ensureStarted();
      // Terminated again and again for two seconds, so reconnects fail too, as they do while a
      // proxy or the network drops every new connection.
      const admin = new pg.Client({ connectionString: cluster.url });
      await admin.connect();
      let terminated = 0;
      try {
        for (const until = Date.now() + 2_000; Date.now() < until;) {
          const { rows } = await admin.query<{ n: string }>(
            `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
              WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'`,
          );
          terminated += Number(rows[0]?.n);
          await sleep(20);
        }
      } finally {
        await admin.end();
      }
      expect(terminated).toBeGreaterThan(0);
      await sleep(2_500);
      expectAlive("pg_terminate_backend");
      await completesNewWork("after-terminate");
      expectAlive("new work after pg_terminate_backend");
    });
  },
);
