/**
 * `Last-Event-ID` across a takeover, with real processes: a `chain` run executes on server A, a
 * client follows it there, leaves, and A is SIGKILLed mid-run; server B takes the run over once
 * A's lease expires (a new attempt, from the last checkpoint, whose event numbers start again at
 * 1). The client reconnects to B with the last id it got: it must not be handed B's events after
 * that number as if they came next (the silent skip), but the rest of A's attempt or an `error`
 * `events_missing`. Rejoining then follows B's attempt; and a reconnect with an id of B's attempt,
 * to a third server, gets exactly the events after it. Every sequence is checked against the steps
 * the run's final state records.
 */
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunId } from "@rein/core";
import { PostgresSaver } from "@rein/postgres";
import { clusterUnavailableReason, ThrowawayCluster } from "@rein/postgres/testing";
import { TOKENS, client, readSse } from "../testing/harness.ts";
import { CHAIN_STEPS } from "../testing/graphs.ts";
import { parseEventId } from "../testing/event-ids.ts";
import { Deployment, until, type DeployedProc } from "../testing/deployment.ts";

/** The module serving the `chain` graph. */
const CHAIN_GRAPHS = resolve(import.meta.dirname, "../testing/chain-graphs.ts");

const LEASE_MS = 2000;
/** How long each of the chain's six steps works. */
const STEP_MS = 5000;
const unavailable = clusterUnavailableReason();
if (unavailable) console.warn(`takeover-reconnect suite skipped: ${unavailable}`);
if (unavailable && process.env["REIN_REQUIRE_POSTGRES"] === "1")
  throw new Error(
    `takeover-reconnect suite cannot run (${unavailable}) and REIN_REQUIRE_POSTGRES=1.`,
  );
const token = TOKENS["alice"]!.token;

type Event = Awaited<ReturnType<typeof readSse>>[number];

/** The attempt an id names (`<attempt>:<n>`). */
const attemptOf = (id: string | null): string => parseEventId(id ?? "").attempt;
/** The steps of a stream's `updates` events, in order. */
const steps = (events: Event[]): string[] =>
  events.filter((e) => e.event === "updates").map((e) => (e.data as { node: string }).node);

describe.skipIf(unavailable !== null)(
  "a reconnect with Last-Event-ID after the run was taken over by another process",
  { timeout: 360_000 },
  () => {
    let cluster: ThrowawayCluster;
    let deploy: Deployment;
    let store: PostgresSaver;

    beforeAll(async () => {
      cluster = await ThrowawayCluster.create();
      cluster.start();
      deploy = new Deployment(cluster.url, LEASE_MS);
      store = await PostgresSaver.connect({ connectionString: cluster.url, schema: deploy.schema });
    }, 60_000);

    afterAll(async () => {
      await store?.close().catch(() => undefined);
      await deploy?.destroy();
      cluster?.destroy();
    });

    /** Joins a run on `server` with an optional Last-Event-ID; reads to its end, error or `stop`. */
    async function join(
      server: DeployedProc,
      threadId: string,
      runId: string,
      lastId?: string,
      stop: (e: Event, all: Event[]) => boolean = () => false,
    ): Promise<Event[]> {
      const response = await fetch(
        `${server.url}/threads/${threadId}/runs/${runId}/stream?streamMode=updates`,
        {
          headers: {
            authorization: `Bearer ${token}`,
            ...(lastId ? { "last-event-id": lastId } : {}),
          },
          signal: AbortSignal.timeout(60_000),
        },
      );
      expect(response.status).toBe(200);
      const all: Event[] = [];
      return readSse(response, (e) => {
        all.push(e);
        return e.event === "end" || e.event === "error" || stop(e, all);
      });
    }

    it("gets the rest of the attempt or events_missing, never the new attempt's later events as if next", async () => {
      const a = await deploy.serve(2, { name: "A", graphs: CHAIN_GRAPHS });
      // A third server, accepting only, to reconnect to later with an id of B's attempt.
      const c = await deploy.serve(0, { name: "C", graphs: CHAIN_GRAPHS });
      const threadId = "taken-over";
      const api = client(a.url!, token);
      expect((await api("POST", "/threads", { graph: "chain", threadId })).status).toBe(201);
      const accepted = await api<{ runId: string }>("POST", `/threads/${threadId}/runs`, {
        input: { ms: STEP_MS },
      });
      expect(accepted.status).toBe(202);
      const runId = accepted.body.runId;

      // Followed on A, the process running it, until two steps' updates; then the client leaves.
      const before = await join(a, threadId, runId, undefined, (_e, all) => steps(all).length >= 2);
      expect(steps(before)).toEqual(CHAIN_STEPS.slice(0, 2));
      const lastId = before.at(-1)!.id!;
      const first = attemptOf(lastId);
      expect(first).not.toBe("");
      a.child.kill("SIGKILL");
      // Mid-run when A died.
      expect((await store.getRun(runId as RunId))?.status).toBe("running");
      // B starts now (earlier, it could have taken the run from the queue before A): it takes
      // the run over once A's lease has expired.
      const b = await deploy.serve(2, { name: "B", graphs: CHAIN_GRAPHS });

      // Reconnected to B with the last id: B takes the run over (its lease expired) in a new
      // attempt, whose events 1.. are not the ones after `lastId`.
      const resumed = await join(b, threadId, runId, lastId);
      // Rejoined (as events_missing says): B's attempt, from its start, until its first update.
      const rejoin = await join(b, threadId, runId, undefined, (e) => e.event === "updates");
      const second = attemptOf(rejoin.at(-1)!.id);
      // The rest, from C, after the first update of B's attempt.
      const rest = await join(c, threadId, runId, rejoin.at(-1)!.id!);
      const run = await until(
        () => store.getRun(runId as RunId).catch(() => undefined),
        (r) => r?.status === "done",
        60_000,
      );
      expect(run?.status).toBe("done");
      const state = await client(b.url!, token)<{ values: { steps?: string[] } }>(
        "GET",
        `/threads/${threadId}/state`,
      );
      const recorded = state.body.values.steps ?? [];
      expect(recorded).toEqual([...CHAIN_STEPS]);
      // A full rejoin, once the run is done: B's attempt from its first event to its end.
      const whole = await join(b, threadId, runId);

      const got = steps(before).concat(steps(resumed));
      const last = resumed.at(-1);
      const summary = JSON.stringify(resumed.map((e) => [e.id, e.event]));
      const ranByB = steps(whole);
      const after = whole.slice(whole.findIndex((e) => e.id === rejoin.at(-1)!.id) + 1);
      const lost = recorded.filter((s) => !got.includes(s) && !ranByB.includes(s)).length;
      const doubled = got.filter((s) => ranByB.includes(s)).length;
      console.info(
        `takeover reconnect: kills 1, attempts ${first} then ${second}, before ${steps(before).join(",")} (last id ${lastId}); ` +
          `reconnect got ${summary}; B ran ${ranByB.join(",")}; reconnect to C got ${rest.length} ` +
          `events (${after.length} expected); steps recorded ${recorded.length}, ` +
          `seen by no stream ${lost} (announced by events_missing: ${last?.event === "error"}), ` +
          `delivered by both attempts ${doubled}`,
      );
      // The reconnect: A's rest (none can come: A is dead) and its end, or events_missing.
      if (last?.event === "end") {
        expect(got, summary).toEqual(recorded);
      } else {
        expect(last?.event, summary).toBe("error");
        const error = last?.data as { error: string; message: string };
        expect(error.error, summary).toBe("events_missing");
        expect(error.message).toMatch(/join/i);
        // What it did deliver came next after `lastId`, in order: the run's next steps.
        expect(got, summary).toEqual(recorded.slice(0, got.length));
      }
      // Nothing of B's attempt was passed off as following `lastId`.
      for (const e of resumed.filter((e) => e.id !== null && e.event !== "error"))
        expect(attemptOf(e.id), summary).toBe(first);

      // B's attempt is a new one, and the steps it ran are the recorded ones after its checkpoint.
      expect(second).not.toBe(first);
      expect(second > first).toBe(true);
      expect(whole.at(-1)?.event).toBe("end");
      expect(ranByB).toEqual(recorded.slice(recorded.length - ranByB.length));
      // The reconnect to C with an id of B's attempt: exactly the events after it, then the end.
      expect(rest.map((e) => [e.event, e.id])).toEqual(after.map((e) => [e.event, e.id]));
      expect(rest.at(-1)?.event).toBe("end");
    });
  },
);
