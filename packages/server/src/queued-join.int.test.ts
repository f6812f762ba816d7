/**
 * Joining a queued run right after its 202 follows it to its end, over real HTTP on SQLite and
 * Postgres: a start attempt refused because the thread is still busy (the run waits for its
 * turn) no longer ends the joined stream with no events while the run is still queued.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { launchRein, TEST_GRAPHS, type Proc } from "./testing/processes.ts";
import {
  TOKENS,
  client,
  postgresBackend,
  readSse,
  serveOn,
  sqliteBackend,
  type Backend,
} from "./testing/harness.ts";

const token = TOKENS["alice"]!.token;

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`joining a queued run on ${backend.name}`, () => {
    const served = serveOn(backend);

    it("a run enqueued behind a running one, joined at once, streams to its end", async () => {
      const api = client(served.url, token);
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
          `${served.url}/threads/${threadId}/runs/${second.body.runId}/stream?streamMode=updates`,
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

/**
 * The race itself, against a real `rein serve` on SQLite: with a short lease the executor tries
 * the queued run again every ~100 ms while the thread is busy, and each refused attempt lived
 * for a moment as a hub of that run id. Hundreds of joins made while the run waits must all stay
 * open (none may end with no events while it is still queued), and a join then follows it to its
 * end.
 */
describe("joining a queued run while its start attempts are refused (rein serve, SQLite)", () => {
  const dir = mkdtempSync(join(tmpdir(), "rein-queued-join-"));
  let server: Proc | undefined;
  afterAll(() => {
    server?.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "no join of the queued run closes early, and a join follows it to its end",
    { timeout: 60_000 },
    async () => {
      writeFileSync(join(dir, "tokens.json"), JSON.stringify(Object.values(TOKENS)));
      server = await launchRein(
        [
          "serve",
          ...["--db", join(dir, "rein.db"), "--graphs", TEST_GRAPHS, "--concurrency", "2"],
          ...["--tokens", join(dir, "tokens.json"), "--port", "0", "--log-level", "silent"],
        ],
        /listening on (\S+)/,
        { REIN_LEASE_TTL_MS: "400" },
      );
      const url = server.url!;
      const api = client(url, token);
      const threadId = "queued-join-race";
      await api("POST", "/threads", { graph: "ledger", threadId });
      expect(
        (await api("POST", `/threads/${threadId}/runs`, { input: { tag: "a", ms: 3_000 } })).status,
      ).toBe(202);
      const queued = await api<{ runId: string }>("POST", `/threads/${threadId}/runs`, {
        input: { tag: "b", ms: 10 },
        multitask: "enqueue",
      });
      expect(queued.status).toBe(202);
      const path = `/threads/${threadId}/runs/${queued.body.runId}`;
      /** Joins, and reports whether the stream ended within `ms` with nothing but `run`. */
      const closesEarly = async (ms: number): Promise<boolean> => {
        const abort = new AbortController();
        const timer = setTimeout(() => abort.abort(), ms);
        try {
          const joined = await fetch(`${url}${path}/stream`, {
            headers: { authorization: `Bearer ${token}` },
            signal: abort.signal,
          });
          const events = await readSse(joined);
          return events.every((e) => e.event === "run");
        } catch {
          return false; // Still open when aborted: it follows the run.
        } finally {
          clearTimeout(timer);
        }
      };
      let joins = 0;
      let early = 0;
      const statusOf = async (): Promise<string> =>
        (await api<{ status: string }>("GET", path)).body.status;
      while ((await statusOf()) === "queued") {
        const batch = await Promise.all(Array.from({ length: 8 }, () => closesEarly(150)));
        joins += batch.length;
        early += batch.filter(Boolean).length;
        // Only joins made while the run was still queued count.
        if ((await statusOf()) !== "queued") break;
      }
      console.info(`queued-join race: ${early} of ${joins} joins closed early`);
      expect(joins).toBeGreaterThan(50);
      expect(early).toBe(0);
    },
  );
});
