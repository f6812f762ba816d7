/**
 * A rolling deploy loses nothing: three `rein worker` processes on a throwaway cluster are
 * replaced one by one (SIGTERM one, start its replacement, next) while background runs with
 * steps longer than the drain execute. Each process stops taking work, lets what it can finish
 * within the drain, and hands the rest over: those runs stay `running` with their lease released,
 * and another worker continues each from its last checkpoint at once, re-running the step that was
 * cut. Counted at the end: no run `cancelled`, none lost (every run `done`), no side effect doubled
 * (the charge is recorded inside `ctx.once`), and the first step of each run executed once (its
 * continuation starts from the checkpoint after it). On SQLite, a `rein serve` stopped during a
 * long background run leaves it for the next start of the server, which continues it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { clusterUnavailableReason, testSchemaName, ThrowawayCluster } from "@rein/postgres/testing";
import { TOKENS } from "../testing/harness.ts";
import { launchRein, type Proc } from "../testing/processes.ts";

const noCluster = clusterUnavailableReason();
if (noCluster) console.warn(`Rolling deploy suite skipped: ${noCluster}`);
const token = TOKENS["alice"]!.token;
const GRAPHS = resolve(import.meta.dirname, "../testing/rolling-graphs.ts");
/**
 * Each run's long step, and the drain: every step cut by a SIGTERM outlasts the drain. 45 s is a
 * step longer than the default drain (30 s); the drain is short here only to keep the test short.
 */
const STEP_MS = 45_000;
const DRAIN_MS = 1_000;
/** The step of the SQLite restart case, which is about the restart, not the step's length. */
const SQLITE_STEP_MS = 5_000;

/** Waits for a process to exit; resolves with its code and signal. */
function exited(p: Proc): Promise<{ code: number | null; signal: string | null }> {
  if (p.child.exitCode !== null || p.child.signalCode !== null)
    return Promise.resolve({ code: p.child.exitCode, signal: p.child.signalCode });
  return new Promise((done) => p.child.once("exit", (code, signal) => done({ code, signal })));
}

describe.skipIf(noCluster !== null)("rolling deploys of workers", { timeout: 300_000 }, () => {
  let cluster: ThrowawayCluster;
  const dir = mkdtempSync(join(tmpdir(), "rein-rolling-"));
  const ledger = join(dir, "ledger.jsonl");
  const schema = testSchemaName();
  const procs: Proc[] = [];
  let server: Proc;
  let common: string[];
  // A long lease (its sweep every 2.5 s): a handed-over run is continued by the hand-over
  // notice, not by a takeover after the lease ran out.
  const env = {
    REIN_LEASE_TTL_MS: "10000",
    REIN_DRAIN_MS: String(DRAIN_MS),
    REIN_TEST_LEDGER: ledger,
  };

  const startWorker = async (): Promise<Proc> => {
    const p = await launchRein(["worker", ...common, "--concurrency", "3"], /worker ready/, env);
    procs.push(p);
    return p;
  };

  beforeAll(async () => {
    cluster = await ThrowawayCluster.create();
    cluster.start();
    writeFileSync(join(dir, "tokens.json"), JSON.stringify(Object.values(TOKENS)));
    common = ["--postgres", cluster.url, "--schema", schema, "--graphs", GRAPHS];
    server = await launchRein(
      [
        "serve",
        ...common,
        ...["--tokens", join(dir, "tokens.json"), "--port", "0", "--log-level", "silent"],
        ...["--concurrency", "0"],
      ],
      /listening on (\S+)/,
      env,
    );
    procs.push(server);
  }, 60_000);

  afterAll(() => {
    for (const p of procs) p.child.kill("SIGKILL");
    cluster?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  async function call(method: string, path: string, body?: unknown): Promise<Response> {
    return fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  /** Creates a thread and accepts a background run on it; returns the thread and run ids. */
  async function submit(threadId: string): Promise<{ threadId: string; runId: string }> {
    expect((await call("POST", "/threads", { graph: "handover", threadId })).status).toBe(201);
    const accepted = await call("POST", `/threads/${threadId}/runs`, { input: { ms: STEP_MS } });
    expect(accepted.status).toBe(202);
    const { runId } = (await accepted.json()) as { runId: string };
    return { threadId, runId };
  }

  async function statusOf(run: { threadId: string; runId: string }): Promise<string> {
    const response = await call("GET", `/threads/${run.threadId}/runs/${run.runId}`);
    return ((await response.json()) as { status: string }).status;
  }

  /** Ledger lines of `what` per thread. */
  function marks(what: string): Map<string, number> {
    const counts = new Map<string, number>();
    if (!existsSync(ledger)) return counts;
    for (const line of readFileSync(ledger, "utf8").split("\n")) {
      if (!line) continue;
      const entry = JSON.parse(line) as { threadId: string; what: string };
      if (entry.what === what) counts.set(entry.threadId, (counts.get(entry.threadId) ?? 0) + 1);
    }
    return counts;
  }

  it("three workers rolled one by one under load: 0 cancelled, 0 lost, 0 doubled", async () => {
    let workers = [await startWorker(), await startWorker(), await startWorker()];
    const runs: { threadId: string; runId: string }[] = [];
    for (let i = 0; i < 9; i++) runs.push(await submit(`roll-0-${i}`));
    let handedOver = 0;
    for (let round = 1; round <= 3; round++) {
      // Mid-step: every worker is inside a 45 s step that the 1 s drain cannot finish.
      await sleep(2_000);
      const old = workers[0]!;
      old.child.kill("SIGTERM");
      const replacement = await startWorker();
      const end = await exited(old);
      expect(end, old.log()).toEqual({ code: 0, signal: null });
      // A stopping worker takes no work: the slots its drained runs free start nothing queued.
      expect(old.log()).not.toContain("could not start a queued run");
      handedOver += Number(/handed (\d+) running run/.exec(old.log())?.[1] ?? 0);
      workers = [...workers.slice(1), replacement];
      // More load while the deploy goes on.
      for (let i = 0; i < 3; i++) runs.push(await submit(`roll-${round}-${i}`));
    }
    // Every run reaches `done`: none lost, none cancelled.
    const statuses = new Map<string, string>();
    await vi.waitFor(
      async () => {
        for (const run of runs) statuses.set(run.runId, await statusOf(run));
        const open = [...statuses.values()].filter((s) => s === "queued" || s === "running");
        if (open.length > 0) throw new Error(`${open.length} runs still going`);
      },
      { timeout: 200_000, interval: 1_000 },
    );
    const counts = { cancelled: 0, done: 0, other: 0 };
    for (const status of statuses.values()) {
      if (status === "cancelled") counts.cancelled++;
      else if (status === "done") counts.done++;
      else counts.other++;
    }
    const charged = marks("charged");
    const prepped = marks("prep");
    const doubled = runs.filter((r) => (charged.get(r.threadId) ?? 0) > 1).length;
    const lost = runs.filter((r) => (charged.get(r.threadId) ?? 0) === 0).length;
    const preppedTwice = runs.filter((r) => (prepped.get(r.threadId) ?? 0) !== 1).length;
    console.info(
      `rolling: 3 rounds, ${runs.length} runs, ${handedOver} handed over, ` +
        `${counts.done} done, ${counts.cancelled} cancelled, ${lost} lost, ${doubled} doubled`,
    );
    expect({ ...counts, lost, doubled, preppedTwice }).toEqual({
      cancelled: 0,
      done: runs.length,
      other: 0,
      lost: 0,
      doubled: 0,
      preppedTwice: 0,
    });
    // The deploy did cut steps: the hand-over was exercised, not avoided by timing.
    expect(handedOver).toBeGreaterThan(0);
  });
});

describe("a restart of rein serve on SQLite", { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "rein-rolling-sqlite-"));
  const ledger = join(dir, "ledger.jsonl");
  const procs: Proc[] = [];
  const env = { REIN_DRAIN_MS: "500", REIN_TEST_LEDGER: ledger };
  writeFileSync(join(dir, "tokens.json"), JSON.stringify(Object.values(TOKENS)));

  afterAll(() => {
    for (const p of procs) p.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  const startServer = async (): Promise<Proc> => {
    const p = await launchRein(
      [
        "serve",
        ...["--db", join(dir, "rein.db"), "--graphs", GRAPHS],
        ...["--tokens", join(dir, "tokens.json"), "--port", "0", "--log-level", "silent"],
      ],
      /listening on (\S+)/,
      env,
    );
    procs.push(p);
    return p;
  };

  const call = async (p: Proc, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${p.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  const lines = (what: string): number =>
    existsSync(ledger)
      ? readFileSync(ledger, "utf8")
          .split("\n")
          .filter((line) => line.includes(`"what":"${what}"`)).length
      : 0;

  it("continues a background run that a SIGTERM cut mid-step: never cancelled, charged once", async () => {
    const first = await startServer();
    expect(
      (await call(first, "POST", "/threads", { graph: "handover", threadId: "s1" })).status,
    ).toBe(201);
    const accepted = await call(first, "POST", "/threads/s1/runs", {
      input: { ms: SQLITE_STEP_MS },
    });
    expect(accepted.status).toBe(202);
    const runId = String(accepted.body["runId"]);
    // Inside the long step (its first step is recorded), then stopped with a drain too short.
    await vi.waitFor(() => expect(lines("prep")).toBe(1), { timeout: 10_000, interval: 50 });
    await sleep(500);
    first.child.kill("SIGTERM");
    expect(await exited(first), first.log()).toEqual({ code: 0, signal: null });
    const second = await startServer();
    const status = async (): Promise<string> =>
      String((await call(second, "GET", `/threads/s1/runs/${runId}`)).body["status"]);
    expect(await status()).not.toBe("cancelled");
    await vi.waitFor(async () => expect(await status()).toBe("done"), {
      timeout: 30_000,
      interval: 200,
    });
    expect({ prep: lines("prep"), charged: lines("charged") }).toEqual({ prep: 1, charged: 1 });
  });
});
