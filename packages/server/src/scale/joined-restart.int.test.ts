/**
 * A joined stream across a Postgres restart, with real processes: a run executes on server A
 * (`rein serve` with capacity) and is joined on server B (`rein serve` accepting only), both on one
 * throwaway cluster, which is stopped and started again mid-run. B must either deliver an `updates`
 * event for every step the run's final state records, then its `end`, or end with an `error`
 * `events_missing` saying how to recover; it never closes having dropped events silently. A clean
 * stop shorter than the lease keeps the run's attempt going; a crash longer than the lease makes
 * it a new attempt (taken over from its last checkpoint), whose event ids start again at 1.
 */
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunId } from "@rein/core";
import { PostgresSaver } from "@rein/postgres";
import { clusterUnavailableReason, ThrowawayCluster } from "@rein/postgres/testing";
import { TOKENS, client, readSse } from "../testing/harness.ts";
import { CHAIN_STEPS } from "../testing/graphs.ts";
import { Deployment, until, type DeployedProc } from "../testing/deployment.ts";
import { compareEventIds, isAttemptEventId } from "../testing/event-ids.ts";

/** The module serving the `chain` graph. */
const CHAIN_GRAPHS = resolve(import.meta.dirname, "../testing/chain-graphs.ts");

const LEASE_MS = 2000;
const unavailable = clusterUnavailableReason();
if (unavailable) console.warn(`joined-restart suite skipped: ${unavailable}`);
if (unavailable && process.env["REIN_REQUIRE_POSTGRES"] === "1")
  throw new Error(`joined-restart suite cannot run (${unavailable}) and REIN_REQUIRE_POSTGRES=1.`);
const token = TOKENS["alice"]!.token;

/** What one joined stream got, against what the run recorded. */
interface Round {
  label: string;
  /** The steps whose `updates` event B delivered, in order (a re-executed step twice). */
  delivered: string[];
  /** The steps the run's final state records. */
  recorded: string[];
  /** The stream's last event. */
  last: { event: string; data: unknown } | undefined;
}

describe.skipIf(unavailable !== null)(
  "a stream joined on another server across a Postgres restart",
  { timeout: 240_000 },
  () => {
    let cluster: ThrowawayCluster;
    let deploy: Deployment;
    let a: DeployedProc;
    let b: DeployedProc;
    let store: PostgresSaver;

    beforeAll(async () => {
      cluster = await ThrowawayCluster.create();
      cluster.start();
      deploy = new Deployment(cluster.url, LEASE_MS);
      a = await deploy.serve(2, { name: "A", graphs: CHAIN_GRAPHS });
      b = await deploy.serve(0, { name: "B", graphs: CHAIN_GRAPHS });
      store = await PostgresSaver.connect({ connectionString: cluster.url, schema: deploy.schema });
    }, 60_000);

    afterAll(async () => {
      await store?.close().catch(() => undefined);
      await deploy?.destroy();
      cluster?.destroy();
    });

    /**
     * Starts a `chain` run on A, joins it on B (or on A, the process running it), restarts the
     * cluster mid-run, reads the joined stream.
     */
    async function round(
      threadId: string,
      mode: "fast" | "immediate",
      downMs: number,
      on: "A" | "B" = "B",
    ): Promise<Round> {
      cluster.ensureStarted();
      const api = client(a.url!, token);
      await until(
        () => api("POST", "/threads", { graph: "chain", threadId }).then((r) => r.status),
        (status) => status === 201,
      );
      const accepted = await api<{ runId: string }>("POST", `/threads/${threadId}/runs`, {
        input: { ms: 600 },
      });
      expect(accepted.status).toBe(202);
      const runId = accepted.body.runId;
      const joined = await fetch(
        `${(on === "A" ? a : b).url}/threads/${threadId}/runs/${runId}/stream?streamMode=updates`,
        {
          headers: { authorization: `Bearer ${token}` },
        },
      );
      expect(joined.status).toBe(200);
      const reading = readSse(joined, (e) => e.event === "end" || e.event === "error");
      // Mid-run: the first step has been checkpointed, the rest have not run.
      await sleep(900);
      cluster.stop(mode);
      await sleep(downMs);
      cluster.start();
      const events = await reading;
      const run = await until(
        () => store.getRun(runId as RunId).catch(() => undefined),
        (r) => r?.status === "done",
        60_000,
      );
      expect(run?.status).toBe("done");
      const state = await api<{ values: { steps?: string[] } }>(
        "GET",
        `/threads/${threadId}/state`,
      );
      const recorded = state.body.values.steps ?? [];
      const delivered = events
        .filter((e) => e.event === "updates")
        .map((e) => (e.data as { node: string }).node);
      // The stream's ids (`<attempt>:<n>`) keep growing across attempts: a reconnect's
      // Last-Event-ID is unambiguous.
      const ids = events.filter((e) => e.id !== null && e.id !== "0").map((e) => e.id!);
      expect(ids.every(isAttemptEventId), ids.join()).toBe(true);
      expect(ids).toEqual([...ids].sort(compareEventIds));
      expect(new Set(ids).size).toBe(ids.length);
      const last = events.at(-1);
      const label = `${threadId} (${mode}, down ${downMs} ms, joined on ${on})`;
      return { label, delivered, recorded, last };
    }

    it("delivers every step's update and the end, or ends with events_missing: never drops events silently", async () => {
      const rounds: Round[] = [];
      for (let i = 0; i < 2; i++) rounds.push(await round(`clean-${i}`, "fast", 700));
      for (let i = 0; i < 2; i++) rounds.push(await round(`crash-${i}`, "immediate", 3 * LEASE_MS));
      // Joined on the process running the attempt: it follows the run into the next attempt.
      rounds.push(await round("owner-crash", "immediate", 3 * LEASE_MS, "A"));
      rounds.push(await round("owner-clean", "fast", 700, "A"));
      const lost = (r: Round): number => r.recorded.filter((s) => !r.delivered.includes(s)).length;
      const doubled = (r: Round): number => r.delivered.length - new Set(r.delivered).size;
      console.info(
        rounds
          .map(
            (r) =>
              `${r.label}: delivered ${r.delivered.length}/${r.recorded.length} steps, lost ${lost(r)}, doubled ${doubled(r)}, last ${r.last?.event} ${JSON.stringify(r.last?.data).slice(0, 160)}`,
          )
          .join("\n"),
      );
      for (const r of rounds) {
        expect(r.recorded, r.label).toEqual([...CHAIN_STEPS]);
        // The process running the attempt keeps every event it published: nothing to miss.
        if (r.label.includes("joined on A")) expect(r.last?.event, r.label).toBe("end");
        const ending = JSON.stringify(r.last);
        if (r.last?.event === "end") {
          // Complete: every recorded step's update arrived, in the run's order.
          expect(lost(r), `${r.label}: ${ending}`).toBe(0);
          expect(r.delivered.filter((s, i) => r.delivered.indexOf(s) === i)).toEqual(r.recorded);
        } else {
          // Incomplete, and it says so, with what to do.
          expect(r.last?.event, `${r.label}: ${ending}`).toBe("error");
          const error = r.last?.data as { error: string; message: string };
          expect(error.error, ending).toBe("events_missing");
          expect(error.message, ending).toMatch(/join/i);
          expect(error.message, ending).toMatch(/state/i);
        }
      }
    });
  },
);
