/**
 * Through PgBouncer in transaction mode, with real processes: a throwaway cluster, Debian's
 * pgbouncer in front of it on its own port (a server pool of four, so one client's transactions
 * land on different server connections), and `rein serve` + `rein worker` whose data connections
 * all go through it. Runs complete, pause and resume, and background runs move between the
 * processes — with LISTEN on a direct URL, and without one (the sweep finds the work).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunId, ThreadId } from "@rein/core";
import { PostgresSaver } from "@rein/postgres";
import {
  bouncerUnavailableReason,
  clusterUnavailableReason,
  freePortIn,
  ThrowawayBouncer,
  ThrowawayCluster,
} from "@rein/postgres/testing";
import { TOKENS, client } from "../testing/harness.ts";
import { Deployment, until, type DeployedProc } from "../testing/deployment.ts";

const LEASE_MS = 2000;
const unavailable = clusterUnavailableReason() ?? bouncerUnavailableReason();
if (unavailable) console.warn(`PgBouncer suite skipped: ${unavailable}`);
if (unavailable && process.env["REIN_REQUIRE_POSTGRES"] === "1")
  throw new Error(`PgBouncer suite cannot run (${unavailable}) and REIN_REQUIRE_POSTGRES=1.`);
const token = TOKENS["alice"]!.token;

/** Runs a pause, an answer and background runs through `server`; returns the ledger tags. */
async function exercise(server: DeployedProc, store: PostgresSaver, prefix: string) {
  const api = client(server.url!, token);
  // A run that pauses, waited for over HTTP, then answered: it finishes and charges once.
  const thread = `${prefix}-approve`;
  expect(
    (await api("POST", "/threads", { graph: "approve-then-charge", threadId: thread })).status,
  ).toBe(201);
  const paused = await api<{ status: string; runId: string }>("POST", `/threads/${thread}/runs`, {
    input: { ms: 50 },
  });
  expect(paused.status).toBe(202);
  await until(
    () => store.getThreadInterrupts(thread as ThreadId, "pending"),
    (pending) => pending.length === 1,
    15_000,
  );
  const answered = await api("POST", `/threads/${thread}/resume`, { resume: "yes" });
  expect(answered.status).toBeLessThan(300);
  const resumed = await until(
    () => store.getRun(paused.body.runId as RunId),
    (run) => run?.status === "done",
    15_000,
  );
  expect(resumed?.status).toBe("done");
  // Background runs, accepted by the server and executed by whichever process has a slot.
  const runs = await Promise.all(
    Array.from({ length: 6 }, async (_, i) => {
      const threadId = `${prefix}-bg-${i}`;
      await api("POST", "/threads", { graph: "ledger", threadId });
      const accepted = await api<{ runId: string }>("POST", `/threads/${threadId}/runs`, {
        input: { tag: threadId, ms: 100 },
      });
      expect(accepted.status).toBe(202);
      return accepted.body.runId as RunId;
    }),
  );
  for (const runId of runs)
    await until(
      () => store.getRun(runId),
      (run) => run?.status === "done",
      15_000,
    );
}

describe.skipIf(unavailable !== null)(
  "rein serve and rein worker through PgBouncer in transaction mode",
  { timeout: 90_000 },
  () => {
    let cluster: ThrowawayCluster;
    let bouncer: ThrowawayBouncer;
    let store: PostgresSaver;
    const deployments: Deployment[] = [];

    beforeAll(async () => {
      cluster = await ThrowawayCluster.create({ port: await freePortIn(55460, 55464) });
      cluster.start();
      bouncer = await ThrowawayBouncer.start({
        port: await freePortIn(55465, 55469),
        serverPort: cluster.port,
        poolSize: 4,
      });
    }, 60_000);

    afterAll(async () => {
      for (const d of deployments) await d.destroy(cluster.url).catch(() => undefined);
      await store?.close();
      await bouncer?.stop();
      cluster?.destroy();
    });

    async function deploy(): Promise<Deployment> {
      const d = new Deployment(bouncer.url, LEASE_MS);
      deployments.push(d);
      await store?.close();
      // The test reads through the bouncer too: the store itself works there.
      store = await PostgresSaver.connect({ connectionString: bouncer.url, schema: d.schema });
      return d;
    }

    it("with LISTEN on a direct URL: pause, answer and background runs complete, each charge once", async () => {
      const d = await deploy();
      const server = await d.serve(0, { listenUrl: cluster.url });
      const worker = await d.worker(2, { listenUrl: cluster.url });
      await exercise(server, store, "direct");
      const charges = d.charges().filter((c) => c["tag"]?.startsWith("direct-bg-"));
      expect(charges).toHaveLength(6);
      expect(new Set(charges.map((c) => c["tag"])).size).toBe(6);
      const approvals = d.charges().filter((c) => c["what"] === "charged");
      expect(approvals).toHaveLength(1);
      expect(worker.log()).not.toMatch(/prepared statement|error/i);
      expect(server.log()).not.toMatch(/prepared statement/i);
      d.killAll();
    });

    it("without a direct URL no process LISTENs through the pooler, and the sweep moves the work", async () => {
      const d = await deploy();
      const server = await d.serve(0);
      const worker = await d.worker(2);
      expect(server.log()).toMatch(/no LISTEN connection/);
      expect(worker.log()).toMatch(/no LISTEN connection/);
      await exercise(server, store, "sweep");
      const charges = d.charges().filter((c) => c["tag"]?.startsWith("sweep-bg-"));
      expect(charges).toHaveLength(6);
      // A LISTEN sent through the pooler would be the last query of one of its server sessions.
      const direct = new PostgresSaver({ connectionString: cluster.url, schema: d.schema });
      const listens = await direct.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query ILIKE 'LISTEN%'",
      );
      await direct.close();
      expect(listens.rows[0]?.n).toBe(0);
      d.killAll();
    });
  },
);
