/**
 * A thread id's claim is recoverable, over real HTTP on SQLite and Postgres: a create that died
 * between claiming an id and writing its row (what a SIGKILL there leaves: the claim, no thread)
 * no longer burns the id — once the claim is stale the next create takes it over, exactly one of
 * two racing creates wins it, and the thread works. A claim still in flight keeps the id taken.
 * Both where claims are kept now (side records) and where a version before them kept them (the
 * once slots), which stay binding after an upgrade (its migration copies them into side records).
 */
import { describe, expect, it } from "vitest";
import type { TaskId, ThreadId } from "@rein/core";
import { THREAD_CLAIM_STALE_MS } from "./idempotency.ts";
import { SIDE_KINDS, writeSlot } from "./side-records.ts";
import {
  TOKENS,
  postgresBackend,
  serveOn,
  sqliteBackend,
  type Backend,
} from "./testing/harness.ts";

/** Where an earlier version stored a create's claim of its thread id: a `ctx.once` slot. */
const CLAIMS = "http:idempotency" as TaskId;

/** Where a claim is left: as this version keeps it (a side record), or as an earlier one did. */
type Keeper = "side record" | "once slot of an earlier version";

function suite(backend: Backend, keeper: Keeper): void {
  describe.skipIf(!backend.available)(`thread id claims on ${backend.name}, in a ${keeper}`, () => {
    const served = serveOn(backend);
    const alice = served.client(TOKENS["alice"]!.token);

    /**
     * Leaves the state of a create that died after its claim and before its row: in a side record,
     * or in a once slot of a store not yet upgraded, which is then upgraded and served again.
     */
    async function abandon(threadId: string, value: unknown): Promise<void> {
      if (keeper === "side record") {
        await writeSlot(
          served.store,
          { tenant: null, kind: SIDE_KINDS.idempotency, threadId, key: "thread:create" },
          value,
        );
        return;
      }
      await served.store.putOnce(threadId as ThreadId, CLAIMS, "thread:create", value);
      await served.replace((store) => store.upgradeFromLegacy!());
    }

    /** The thread exists and takes a run. */
    async function works(threadId: string): Promise<void> {
      expect((await alice("GET", `/threads/${threadId}`)).status).toBe(200);
      const run = await alice<{ status: string }>("POST", `/threads/${threadId}/runs`, {
        input: { tag: threadId },
        wait: true,
      });
      expect(run.status).toBe(200);
      expect(run.body.status).toBe("done");
    }

    it("an id left claimed by a create of an earlier version that died is created again, and works", async () => {
      await abandon("burned-legacy", "a-request-that-died");
      expect((await alice("GET", "/threads/burned-legacy")).status).toBe(404);
      const created = await alice("POST", "/threads", {
        graph: "ledger",
        threadId: "burned-legacy",
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      await works("burned-legacy");
    });

    it("an id whose claim is older than the stale window, with no thread, is created again", async () => {
      await abandon("burned-stale", { by: "died", at: Date.now() - THREAD_CLAIM_STALE_MS - 1_000 });
      const created = await alice("POST", "/threads", {
        graph: "ledger",
        threadId: "burned-stale",
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      await works("burned-stale");
    });

    it("a claim still in flight keeps the id taken", async () => {
      await abandon("in-flight", { by: "creating-now", at: Date.now() });
      const refused = await alice<{ error: string }>("POST", "/threads", {
        graph: "ledger",
        threadId: "in-flight",
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe("invalid_input");
    });

    it("two creates racing for one abandoned id: exactly one wins it", async () => {
      await abandon("contested", "died");
      const outcomes = await Promise.all(
        Array.from({ length: 4 }, () =>
          alice("POST", "/threads", { graph: "ledger", threadId: "contested" }),
        ),
      );
      expect(outcomes.map((o) => o.status).sort()).toEqual([201, 400, 400, 400]);
      await works("contested");
    });
  });
}

const postgres = await postgresBackend();
for (const keeper of ["side record", "once slot of an earlier version"] as const) {
  suite(sqliteBackend, keeper);
  suite(postgres, keeper);
}
