/**
 * Scale-out on one Postgres database with real processes: `rein serve` A and B and `rein worker`s
 * share the work. A run started through A is resumed through B; two servers answering one
 * interrupt give one 200 and one 409; a stream joined on B shows the events of a run executing on
 * A; a worker killed mid-run has its run finished by another.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Interrupt, RunId, ThreadId } from "@rein/core";
import { PostgresSaver } from "@rein/postgres";
import { probePostgres, testSchemaName } from "@rein/postgres/testing";
import { TOKENS, client, readSse } from "../testing/harness.ts";
import { launchRein, TEST_GRAPHS, type Proc } from "../testing/processes.ts";

const GRAPHS = TEST_GRAPHS;
const LEASE_MS = 2000;
const probe = await probePostgres();

describe.skipIf(!probe.available)(
  "scale-out on Postgres with real processes",
  { timeout: 120_000 },
  () => {
    const schema = testSchemaName();
    let dir: string;
    let store: PostgresSaver;
    let a: Proc;
    let b: Proc;
    const procs: Proc[] = [];
    const token = TOKENS["alice"]!.token;

    async function serve(concurrency: number): Promise<Proc> {
      const p = await launchRein(
        [
          "serve",
          "--postgres",
          probe.url,
          "--schema",
          schema,
          "--graphs",
          GRAPHS,
          "--tokens",
          join(dir, "tokens.json"),
          "--port",
          "0",
          "--log-level",
          "silent",
          "--concurrency",
          String(concurrency),
        ],
        /listening on (\S+)/,
        { REIN_LEASE_TTL_MS: String(LEASE_MS) },
      );
      procs.push(p);
      return p;
    }

    async function worker(): Promise<Proc> {
      const p = await launchRein(
        [
          "worker",
          "--postgres",
          probe.url,
          "--schema",
          schema,
          "--graphs",
          GRAPHS,
          "--concurrency",
          "1",
        ],
        /worker ready/,
        { REIN_LEASE_TTL_MS: String(LEASE_MS) },
      );
      procs.push(p);
      return p;
    }

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "rein-scale-"));
      writeFileSync(join(dir, "tokens.json"), JSON.stringify(Object.values(TOKENS)));
      store = await PostgresSaver.connect({ connectionString: probe.url, schema });
      // A executes queued runs; B only accepts requests.
      a = await serve(1);
      b = await serve(0);
    }, 120_000);

    afterAll(async () => {
      for (const p of procs) p.child.kill("SIGKILL");
      await store.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await store.pool.query(`DROP SCHEMA IF EXISTS "${schema}_jobs" CASCADE`);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("resumes through B a run started through A; two servers answering one interrupt give one 200 and one 409", async () => {
      const onA = client(a.url!, token);
      const onB = client(b.url!, token);
      await onA("POST", "/threads", { graph: "desk", threadId: "x-1" });
      const paused = await onA<{ interrupts: Interrupt[] }>("POST", "/threads/x-1/runs", {
        input: {},
        wait: true,
      });
      const refund = paused.body.interrupts.find((i) => i.namespace[0] === "refund_agent")!;
      const email = paused.body.interrupts.find((i) => i.namespace[0] === "email_agent")!;
      const viaB = await onB<{ status: string; interrupts: Interrupt[] }>(
        "POST",
        "/threads/x-1/resume",
        {
          target: { runId: refund.runId, namespace: refund.namespace },
          resume: { type: "accept" },
        },
      );
      expect(viaB.status).toBe(200);
      expect(viaB.body.interrupts.map((i) => i.id)).toEqual([email.id]);
      const body = { resumeMap: { [email.id]: { type: "accept" } } };
      const [r1, r2] = await Promise.all([
        onA("POST", "/threads/x-1/resume", body),
        onB("POST", "/threads/x-1/resume", body),
      ]);
      expect([r1.status, r2.status].sort()).toEqual([200, 409]);
      const loser = r1.status === 409 ? r1 : r2;
      expect(loser.body).toMatchObject({ error: "stale_target", details: { threadId: "x-1" } });
      const answers = await store.listAudit({ threadId: "x-1" as ThreadId });
      expect(answers.items.filter((x) => x.action === "answer")).toHaveLength(2);
      expect((await onB<{ status: string }>("GET", "/threads/x-1")).body.status).toBe("done");
    });

    it("shows on B the live events of a background run executing on A", async () => {
      const onB = client(b.url!, token);
      await onB("POST", "/threads", { graph: "slow", threadId: "x-2" });
      const accepted = await onB<{ runId: string }>("POST", "/threads/x-2/runs", {
        input: { steps: 6, ms: 300 },
      });
      expect(accepted.status).toBe(202);
      const joined = await fetch(
        `${b.url}/threads/x-2/runs/${accepted.body.runId}/stream?streamMode=custom`,
        {
          headers: { authorization: `Bearer ${token}` },
        },
      );
      const events = await readSse(joined, (e) => e.event === "end");
      expect(events.filter((e) => e.event === "custom").length).toBeGreaterThanOrEqual(3);
      expect(events.at(-1)?.event).toBe("end");
      const lease = await store.getRun(accepted.body.runId as RunId);
      expect(lease?.status).toBe("done");
    });

    it("finishes the run of a worker killed mid-run on another process, from its last checkpoint", async () => {
      await Promise.all([worker(), worker()]);
      const onB = client(b.url!, token);
      await onB("POST", "/threads", { graph: "slow", threadId: "x-3" });
      const accepted = await onB<{ runId: string }>("POST", "/threads/x-3/runs", {
        input: { steps: 8, ms: 250 },
      });
      const owner = await vi.waitFor(
        async () => {
          const holder = (await store.getLease("x-3" as ThreadId))?.owner;
          if (!holder) throw new Error("no process holds x-3's lease");
          return holder;
        },
        { timeout: 5_000, interval: 50 },
      );
      const pid = Number(owner.split("-")[0]);
      const victim = procs.find((p) => p.child.pid === pid);
      expect(victim).toBeDefined();
      victim!.child.kill("SIGKILL");
      // The run row may not exist yet when the victim dies (it is written with the input checkpoint).
      await expect
        .poll(async () => (await store.getRun(accepted.body.runId as RunId))?.status ?? "missing", {
          timeout: 60_000,
          interval: 250,
        })
        .toBe("done");
      const state = await client(victim === b ? a.url! : b.url!, token)<{
        values: { done: number };
      }>("GET", "/threads/x-3/state");
      expect(state.body.values.done).toBe(8);
      const newOwner = (await store.getRun(accepted.body.runId as RunId))?.status;
      expect(newOwner).toBe("done");
    });
  },
);
