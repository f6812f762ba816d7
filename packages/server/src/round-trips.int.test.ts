/**
 * Round trips to Postgres of one `POST /threads/:id/resume` on a server that never touched the
 * thread, counted on the real server: one read of the thread with its head's run (tenant, graph
 * and the run's id), then core's three — the lease with the answer's reads, the answer with the
 * continuation's reads, the commit with the release. The test fails if a read is added back.
 */
import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresSaver } from "@rein/postgres";
import { probePostgres, redactUrl, testSchemaName } from "@rein/postgres/testing";
import { TOKENS, client, startTestServer, type TestServer } from "./testing/harness.ts";

const probe = await probePostgres();

/**
 * What the server's own timers read, whatever the requests: the deadline timer (every second)
 * and the recovery sweep. Left out of the count, so a tick that falls inside a request does not
 * count as the request's.
 */
const BACKGROUND = new Set(["expired_interrupts", "runs_by_status"]);

/** The statement names a pool sends, in order (the schema prefix cut off), but BACKGROUND. */
function countQueries(pool: pg.Pool): string[] {
  const sent: string[] = [];
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as { query: unknown }).query = (...args: unknown[]) => {
    const first = args[0] as { name?: string; text?: string } | string;
    const name = typeof first === "string" ? first : (first.name ?? first.text ?? "?");
    const short = name.replace(/^rein_[0-9a-f]{10}_/, "");
    if (!BACKGROUND.has(short)) sent.push(short);
    return query(...args);
  };
  return sent;
}

const CORE_RESUME = ["lease_and_read", "answer_write", "commit_step"];

describe.skipIf(!probe.available)(
  `round trips of an HTTP resume, postgres at ${redactUrl(probe.url)}`,
  () => {
    const savers: PostgresSaver[] = [];
    const servers: TestServer[] = [];
    let schema = "";
    afterEach(async () => {
      await Promise.all(servers.splice(0).map((s) => s.close()));
      await savers[0]?.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await Promise.all(savers.splice(0).map((s) => s.close()));
    });

    /** Pauses threads of `ask` on one server, and returns a second server that never saw them. */
    async function pausedThreads(ids: string[]) {
      schema = testSchemaName();
      for (let i = 0; i < 2; i++)
        savers.push(await PostgresSaver.connect({ connectionString: probe.url, schema }));
      const [pausing, resuming] = savers as [PostgresSaver, PostgresSaver];
      // No webhook delivery loop: its periodic claim shares the pool whose statements are counted.
      const quiet = { webhookDelivery: false as const };
      servers.push(await startTestServer(pausing, quiet), await startTestServer(resuming, quiet));
      const alice = client((servers[0] as TestServer).url, TOKENS["alice"]!.token);
      const runs: Record<string, string> = {};
      for (const threadId of ids) {
        expect((await alice("POST", "/threads", { graph: "ask", threadId })).status).toBe(201);
        const run = await alice("POST", `/threads/${threadId}/runs`, { input: {}, wait: true });
        expect(run.body["status"]).toBe("interrupted");
        runs[threadId] = run.body["runId"] as string;
      }
      return {
        runs,
        resuming,
        alice: client((servers[1] as TestServer).url, TOKENS["alice"]!.token),
      };
    }

    it("a resume: the thread with its head, then the lease, the answer and the commit", async () => {
      const { resuming, alice, runs } = await pausedThreads(["r1", "r2"]);
      const sent = countQueries(resuming.pool);
      const done = await alice("POST", "/threads/r1/resume", { resume: { text: "ok" } });
      expect(done.status).toBe(200);
      expect(done.body["status"]).toBe("done");
      expect(done.body["runId"]).toBe(runs["r1"]);
      expect(sent).toEqual(["get_thread_head", ...CORE_RESUME]);
      // A targeted one costs the same: its run is checked by core, under the lease.
      sent.length = 0;
      const targeted = await alice("POST", "/threads/r2/resume", {
        target: { runId: runs["r2"], namespace: [] },
        resume: { text: "yes" },
      });
      expect(targeted.status).toBe(200);
      expect((targeted.body["values"] as { answer?: string }).answer).toBe("yes");
      expect(sent).toEqual(["get_thread_head", ...CORE_RESUME]);
    });

    it("a target run of another thread is 404 and answers nothing", async () => {
      const { resuming, alice, runs } = await pausedThreads(["r3", "r4"]);
      const refused = await alice("POST", "/threads/r3/resume", {
        target: { runId: runs["r4"], namespace: [] },
        resume: { text: "no" },
      });
      expect(refused.status).toBe(404);
      expect(refused.body["error"]).toBe("not_found");
      for (const threadId of ["r3", "r4"])
        expect(await resuming.getThreadInterrupts(threadId as never, "pending")).toHaveLength(1);
      const unknown = await alice("POST", "/threads/r3/resume", {
        target: { runId: "no-such-run", namespace: [] },
        resume: { text: "no" },
      });
      expect(unknown.status).toBe(404);
    });
  },
);
