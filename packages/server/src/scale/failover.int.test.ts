/**
 * A primary failover under real processes: a primary with a synchronous streaming replica (both
 * throwaway clusters, the replica made with `pg_basebackup`), `rein serve` and two `rein worker`s
 * on a multi-host URL (`host-a,host-b` with `target_session_attrs=read-write`). With runs paused,
 * answered and running, the primary is stopped with `-m immediate` and the replica promoted:
 * every acknowledged run and answer is on the new primary, the runs left running finish, no
 * once-guarded side effect happens twice, and no step runs twice: the lease table is logged, so
 * the new primary still has the leases of the workers running them, which go on with them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunId, ThreadId } from "@rein/core";
import { PostgresSaver } from "@rein/postgres";
import { clusterUnavailableReason, freePortIn, ThrowawayCluster } from "@rein/postgres/testing";
import pg from "pg";
import { TOKENS, client } from "../testing/harness.ts";
import { Deployment, until } from "../testing/deployment.ts";

/**
 * Longer than the failover takes: a holder that reconnects in time keeps its lease (it is in the
 * logged lease table the replica has), so nothing left running may be run again by another worker.
 */
const LEASE_MS = 8000;
const unavailable = clusterUnavailableReason();
if (unavailable) console.warn(`failover suite skipped: ${unavailable}`);
if (unavailable && process.env["REIN_REQUIRE_POSTGRES"] === "1")
  throw new Error(`failover suite cannot run (${unavailable}) and REIN_REQUIRE_POSTGRES=1.`);
const token = TOKENS["alice"]!.token;

/** Waits until the primary streams to a synchronous standby. */
async function waitForSyncStandby(url: string): Promise<void> {
  await until(
    async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        const { rows } = await c.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_replication WHERE sync_state = 'sync'",
        );
        return rows[0]?.n ?? 0;
      } finally {
        await c.end();
      }
    },
    (n) => n === 1,
    20_000,
  );
}

describe.skipIf(unavailable !== null)(
  "serve and workers across a primary failover",
  { timeout: 120_000 },
  () => {
    let primary: ThrowawayCluster;
    let replica: ThrowawayCluster;
    let deploy: Deployment;

    beforeAll(async () => {
      primary = await ThrowawayCluster.create({
        port: await freePortIn(55470, 55474),
        settings: { synchronous_standby_names: "'*'" },
      });
      primary.start();
      replica = await ThrowawayCluster.replicaOf(primary, {
        port: await freePortIn(55475, 55479),
      });
      replica.start();
      await waitForSyncStandby(primary.url);
    }, 60_000);

    afterAll(async () => {
      await deploy?.destroy();
      replica?.destroy();
      primary?.destroy();
    });

    it("every acknowledged run and answer survives, runs left running finish, nothing runs twice", async () => {
      const hosts = `127.0.0.1:${primary.port},127.0.0.1:${replica.port}`;
      const url = `postgres://postgres@${hosts}/postgres?target_session_attrs=read-write`;
      deploy = new Deployment(url, LEASE_MS);
      const server = await deploy.serve(0);
      await deploy.worker(4);
      await deploy.worker(4);
      const api = client(server.url!, token);

      // Six approvals paused; three answered before the failover (their continuations run 3 s,
      // across it), three after.
      const threads = Array.from({ length: 6 }, (_, i) => `approve-${i}`);
      const runIds: RunId[] = [];
      for (const threadId of threads) {
        expect(
          (await api("POST", "/threads", { graph: "approve-then-charge", threadId })).status,
        ).toBe(201);
        const accepted = await api<{ runId: string }>("POST", `/threads/${threadId}/runs`, {
          input: { ms: 3_000 },
        });
        expect(accepted.status).toBe(202);
        runIds.push(accepted.body.runId as RunId);
      }
      const direct = await PostgresSaver.connect({ connectionString: url, schema: deploy.schema });
      for (const threadId of threads)
        await until(
          () => direct.getThreadInterrupts(threadId as ThreadId, "pending"),
          (p) => p.length === 1,
          20_000,
        );
      const acknowledged: string[] = [];
      for (const threadId of threads.slice(0, 3)) {
        const answered = await api("POST", `/threads/${threadId}/resume`, {
          resume: "yes",
          wait: false,
        });
        expect(answered.status).toBeLessThan(300);
        acknowledged.push(threadId);
      }
      // Long background runs, running at the failover.
      const ledgerRuns: RunId[] = [];
      for (let i = 0; i < 4; i++) {
        const threadId = `long-${i}`;
        await api("POST", "/threads", { graph: "ledger", threadId });
        const accepted = await api<{ runId: string }>("POST", `/threads/${threadId}/runs`, {
          input: { tag: threadId, ms: 3_000 },
        });
        expect(accepted.status).toBe(202);
        ledgerRuns.push(accepted.body.runId as RunId);
      }
      await until(
        () => Promise.all(ledgerRuns.map((id) => direct.getRun(id))),
        (runs) => runs.every((r) => r?.status === "running"),
        20_000,
      );
      await direct.close();

      const failedAt = Date.now();
      primary.stop("immediate");
      replica.promote();

      // The first connection goes to the stopped primary and fails; the next reaches the new one.
      const after = await until(
        () => PostgresSaver.connect({ connectionString: url, schema: deploy.schema }),
        () => true,
        20_000,
      );
      try {
        // What was acknowledged before the failover is on the new primary.
        for (const threadId of acknowledged) {
          const answered = await after.getThreadInterrupts(threadId as ThreadId, "answered");
          expect(answered, threadId).toHaveLength(1);
        }
        for (const id of [...runIds, ...ledgerRuns]) expect(await after.getRun(id)).toBeDefined();
        // Answers after the failover, retried while the processes reconnect (503 meanwhile).
        for (const threadId of threads.slice(3))
          await until(
            () => api("POST", `/threads/${threadId}/resume`, { resume: "yes", wait: false }),
            (reply) => reply.status < 300,
            30_000,
          );
        const done = await until(
          () => Promise.all([...runIds, ...ledgerRuns].map((id) => after.getRun(id))),
          (runs) => runs.every((r) => r?.status === "done"),
          60_000,
        );
        expect(done.every((r) => r?.status === "done")).toBe(true);
        const finishedIn = Date.now() - failedAt;
        const lines = deploy.charges();
        const charged = lines.filter((l) => l["what"] === "charged");
        const ledger = lines.filter((l) => l["tag"]?.startsWith("long-"));
        console.info(
          `failover: ${runIds.length + ledgerRuns.length} runs done ${finishedIn} ms after the primary stopped; ` +
            `once-guarded charges ${charged.length} for ${threads.length} answers; ` +
            `unguarded ledger lines ${ledger.length} for ${ledgerRuns.length} runs; ` +
            `continuations ${lines.filter((l) => l["what"] === "continuing").length} for ${threads.length} answers`,
        );
        for (const threadId of threads)
          expect(
            charged.filter((l) => l["threadId"] === threadId),
            threadId,
          ).toHaveLength(1);
        // Nothing ran twice, guarded or not: each step left running at the failover was finished
        // by the worker holding its lease, whose lease the new primary still had.
        const continuing = lines.filter((l) => l["what"] === "continuing");
        const executions = {
          longRuns: ledgerRuns.map((_, i) => ledger.filter((l) => l["tag"] === `long-${i}`).length),
          continuations: threads.map((t) => continuing.filter((l) => l["threadId"] === t).length),
        };
        expect(executions).toEqual({
          longRuns: ledgerRuns.map(() => 1),
          continuations: threads.map(() => 1),
        });
      } finally {
        await after.close();
      }
    });
  },
);
