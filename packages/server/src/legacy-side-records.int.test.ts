/**
 * A keyed request made before an upgrade is replayed after it, on SQLite and Postgres: a server
 * of a version before side records kept its idempotency claims in once slots; the store's
 * migration copies them into side records, so a retry after the upgrade gets the first outcome
 * (nothing applied twice) and the key stays bound to the request it was first sent with.
 */
import { describe, expect, it } from "vitest";
import {
  TOKENS,
  postgresBackend,
  serveOn,
  sqliteBackend,
  type Backend,
} from "./testing/harness.ts";

type Json = Record<string, unknown>;
interface Result {
  runId: string;
  status: string;
  interrupts: { id: string; runId: string; namespace: string[] }[];
  values: Json;
}

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(
    `keyed requests across the upgrade on ${backend.name}`,
    () => {
      const served = serveOn(backend);
      const alice = served.client(TOKENS["alice"]!.token);

      /** Stops the server, leaves its records as the earlier version did, upgrades, serves again. */
      async function upgrade(): Promise<void> {
        const upgraded = await served.replace((store) => store.upgradeFromLegacy!());
        // The claims and outcomes made before were all in once slots.
        expect(upgraded.rewound).toBeGreaterThan(0);
      }

      it("replays a keyed run start and a keyed answer made before the upgrade", async () => {
        expect((await alice("POST", "/threads", { graph: "desk", threadId: "t-up" })).status).toBe(
          201,
        );
        const start = { input: {}, wait: true };
        const startKey = { "idempotency-key": "start-before-upgrade" };
        const started = await alice<Result>("POST", "/threads/t-up/runs", start, startKey);
        expect(started.status).toBe(200);
        expect(started.body.status).toBe("interrupted");
        const refund = started.body.interrupts.find((i) => i.namespace[0] === "refund_agent")!;
        const answer = {
          target: { runId: refund.runId, namespace: refund.namespace },
          resume: { type: "accept" },
        };
        const answerKey = { "idempotency-key": "answer-before-upgrade" };
        const answered = await alice<Result>("POST", "/threads/t-up/resume", answer, answerKey);
        expect(answered.status).toBe(200);

        await upgrade();

        // Each key is still bound to the request it was first sent with (asked first: a replay
        // would claim the key afresh had the claim been lost).
        const otherStart = await alice<{ error: string }>(
          "POST",
          "/threads/t-up/runs",
          { input: { ticket: "T-2" }, wait: true },
          startKey,
        );
        expect(otherStart.status).toBe(422);
        expect(otherStart.body.error).toBe("idempotency_key_reused");
        const otherAnswer = await alice<{ error: string }>(
          "POST",
          "/threads/t-up/resume",
          { ...answer, resume: { type: "ignore" } },
          answerKey,
        );
        expect(otherAnswer.status).toBe(422);
        expect(otherAnswer.body.error).toBe("idempotency_key_reused");

        const startAgain = await alice<Result>("POST", "/threads/t-up/runs", start, startKey);
        expect(startAgain.status).toBe(200);
        expect(startAgain.body).toEqual(started.body);
        const answerAgain = await alice<Result>("POST", "/threads/t-up/resume", answer, answerKey);
        expect(answerAgain.status).toBe(200);
        expect(answerAgain.body).toEqual(answered.body);

        // Nothing applied twice: one root run, one answer.
        const runs = await alice<{ items: Json[] }>("GET", "/threads/t-up/runs");
        const roots = runs.body.items.filter((r) => r["parentRunId"] === null);
        expect(roots.map((r) => r["runId"])).toEqual([started.body.runId]);
        const audit = await alice<{ items: Json[] }>("GET", "/audit?threadId=t-up");
        expect(audit.body.items.filter((a) => a["action"] === "answer")).toHaveLength(1);
      });
    },
  );
}

const postgres = await postgresBackend();
suite(sqliteBackend);
suite(postgres);
