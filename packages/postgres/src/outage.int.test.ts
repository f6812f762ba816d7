/**
 * A Postgres outage in the middle of an answer (issue 8, defect 3), on a throwaway cluster (its
 * own data directory and port, started and stopped here; never the shared test server). The
 * server is stopped while the answer's transaction is open: the process must survive, the caller
 * must get a typed, retryable error, and once the server is back the same answer (same request
 * id) applies exactly once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  bundleWorker,
  effectsByLabel,
  Ledger,
  runApprovalWorker,
  startApprovalWorker,
  type ApprovalWorkerConfig,
  type Report,
  type ScenarioSetup,
  WorkerProcess,
} from "@rein/core/testing/process";
import { threadId } from "@rein/core/testing";
import { clusterUnavailableReason, ThrowawayCluster } from "./cluster.ts";
import { PostgresSaver } from "./saver.ts";
import { postgresRequired } from "./testing.ts";

const unavailable = clusterUnavailableReason();
if (unavailable) {
  if (postgresRequired())
    throw new Error(
      `Cannot make a throwaway Postgres cluster (${unavailable}), and REIN_REQUIRE_POSTGRES=1.`,
    );
  console.warn(
    `Cannot make a throwaway Postgres cluster (${unavailable}): skipping the outage test.`,
  );
}

describe.skipIf(unavailable !== null)("a Postgres outage during an answer", () => {
  const dir = mkdtempSync(join(tmpdir(), "rein-pg-outage-"));
  const schema = "rein_outage";
  let cluster: ThrowawayCluster;
  const setup: ScenarioSetup = {
    worker: { command: process.execPath, args: [] },
    dir,
    open: () => PostgresSaver.connect({ connectionString: cluster.url, schema }),
  };
  let outageWorker: ScenarioSetup["worker"];

  beforeAll(async () => {
    cluster = await ThrowawayCluster.create();
    cluster.start();
    const [fault, outage] = await Promise.all([
      bundleWorker(fileURLToPath(new URL("./int/fault-worker.ts", import.meta.url))),
      bundleWorker(fileURLToPath(new URL("./int/outage-worker.ts", import.meta.url))),
    ]);
    setup.worker = { ...fault, args: [...fault.args, cluster.url, schema] };
    outageWorker = { ...outage, args: [...outage.args, cluster.url, schema] };
    await (await setup.open()).close();
  }, 90_000);
  beforeEach(() => cluster.ensureStarted());
  afterAll(() => {
    cluster?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it("the process survives, the caller gets a typed retryable error, and a retry applies once", async () => {
    const ledger = new Ledger(join(dir, "outage.ledger"));
    const base = { threadId: "outage", ledger: ledger.path, questions: 1 as const, ttlMs: 1000 };
    const [started] = await runApprovalWorker(setup, {
      ...base,
      steps: [{ op: "invoke", input: { note: "start" } }],
    });
    expect(started).toMatchObject({ ok: true, status: "interrupted" });

    const config: ApprovalWorkerConfig = {
      ...base,
      steps: [
        { op: "resume", answer: "yes", requestId: "answer-1" },
        { op: "wait", line: "retry" },
        { op: "resume", answer: "yes", requestId: "answer-1" },
      ],
    };
    const worker = startApprovalWorker({ ...setup, worker: outageWorker }, config);
    try {
      await worker.waitForEvent("in-transaction", 30_000);
      cluster.stop("immediate");
      // Let the dropped connection reach the worker while its transaction is idle.
      await sleep(500);
      worker.send("go");
      let first: Report;
      try {
        first = await worker.waitForEvent("result", 30_000);
      } catch (error) {
        throw new Error(
          `The worker did not survive the server going away; it must return a typed error instead. ${String(error)}`,
        );
      }
      expect(
        first,
        "a driver failure reaches the caller as a typed, retryable error",
      ).toMatchObject({
        ok: false,
        name: "StoreUnavailableError",
        code: "store_unavailable",
        retryable: true,
      });

      cluster.start();
      worker.send("retry");
      await worker.waitFor((r) => r.event === "closed", 30_000);
      const results = worker.events("result");
      expect(results[1], "the retried answer applies").toMatchObject({ ok: true, status: "done" });
    } finally {
      const exit = await Promise.race([worker.exited, sleep(5_000).then(() => null)]);
      if (!exit) await worker.kill();
    }
    const exit = await worker.exited;
    expect(exit.code, `the worker died: ${exit.stderr}`).toBe(0);

    expect(
      effectsByLabel(ledger, "outage")["charge-1"],
      "the answered step took effect once",
    ).toMatchObject({
      raw: 1,
      keys: 1,
      values: ["yes"],
    });
    const saver = await setup.open();
    try {
      const answers = (await saver.listAudit({ threadId: threadId("outage") })).items.filter(
        (a) => a.action === "answer",
      );
      expect(answers, "the answer was recorded once").toHaveLength(1);
    } finally {
      await saver.close();
    }
  }, 120_000);

  it("a server lost in the middle of migrations: the process survives and a retry migrates", async () => {
    const migrating = {
      ...outageWorker,
      args: [...outageWorker.args.slice(0, -1), "rein_outage_migrate"],
    };
    const worker = WorkerProcess.start(migrating, ["migrate"]);
    try {
      await worker.waitForEvent("in-transaction", 30_000);
      cluster.stop("immediate");
      await sleep(500);
      worker.send("go");
      let first: Report;
      try {
        first = await worker.waitForEvent("result", 30_000);
      } catch (error) {
        throw new Error(
          `The worker did not survive the server going away; it must return a typed error instead. ${String(error)}`,
        );
      }
      expect(
        first,
        "a driver failure reaches the caller as a typed, retryable error",
      ).toMatchObject({
        ok: false,
        name: "StoreUnavailableError",
        code: "store_unavailable",
        retryable: true,
      });
    } finally {
      cluster.start();
    }
    worker.send("retry");
    await worker.waitForEvent("closed", 30_000);
    expect(
      worker.events("result")[1],
      "migrating again once the server is back works",
    ).toMatchObject({
      ok: true,
    });
    expect((await worker.exited).code).toBe(0);
  }, 120_000);
});
