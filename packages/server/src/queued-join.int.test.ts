/**
 * Joining a queued run right after its 202 follows it to its end, over real HTTP on SQLite and
 * Postgres: a start attempt refused because the thread is still busy (the run waits for its
 * turn) no longer ends the joined stream with no events while the run is still queued.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  TOKENS,
  client,
  postgresBackend,
  readSse,
  sqliteBackend,
  startTestServer,
  type Backend,
  type TestServer,
  type TestStore,
} from "./testing/harness.ts";

const token = TOKENS["alice"]!.token;

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`joining a queued run on ${backend.name}`, () => {
    let store: TestStore;
    let server: TestServer;
    beforeEach(async () => {
      store = await backend.create();
      server = await startTestServer(store.store);
    });
    afterEach(async () => {
      await server.close();
      await store.destroy();
    });

    it("a run enqueued behind a running one, joined at once, streams to its end", async () => {
      const api = client(server.url, token);
      for (let round = 0; round < 2; round++) {
        const threadId = `queued-join-${round}`;
        await api("POST", "/threads", { graph: "ledger", threadId });
        const first = await api("POST", `/threads/${threadId}/runs`, {
          input: { tag: `${threadId}-a`, ms: 400 },
        });
        expect(first.status).toBe(202);
        const second = await api<{ runId: string; status: string }>(
          "POST",
          `/threads/${threadId}/runs`,
          { input: { tag: `${threadId}-b`, ms: 50 }, multitask: "enqueue" },
        );
        expect(second.status).toBe(202);
        const joined = await fetch(
          `${server.url}/threads/${threadId}/runs/${second.body.runId}/stream?streamMode=updates`,
          { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(15_000) },
        );
        const events = await readSse(joined, (e) => e.event === "end" || e.event === "error");
        const names = events.map((e) => e.event);
        expect(names.at(-1), JSON.stringify(names)).toBe("end");
        expect(names).toContain("updates");
        const end = events.at(-1)!.data as { result: { status: string; runId: string } };
        expect(end.result.runId).toBe(second.body.runId);
        expect(end.result.status).toBe("done");
      }
    });
  });
}

suite(sqliteBackend);
suite(await postgresBackend());
