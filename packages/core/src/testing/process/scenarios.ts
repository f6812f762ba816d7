/**
 * Real-process fault scenarios of issue 8 ("one writer per thread"), shared by the SQLite and
 * Postgres tests. Each drives {@link approvalWorkerMain} workers and then checks the store and
 * the side-effect ledger with vitest's `expect`.
 */
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import type { Checkpointer } from "../../checkpoint/types.ts";
import type { ThreadId } from "../../ids.ts";
import type { ApprovalWorkerConfig, WorkerStep } from "./approval.ts";
import { Ledger } from "./ledger.ts";
import { WorkerProcess, type ProcessCommand, type Report } from "./worker.ts";

/** What a scenario needs: the worker command, a scratch directory and a way to open the store. */
export interface ScenarioSetup {
  worker: ProcessCommand;
  /** A directory for ledgers; each scenario uses its own files in it. */
  dir: string;
  /** Opens the store the workers use (closed by the scenario). */
  open: () => Promise<Checkpointer>;
}

/** Starts one approval worker. */
export function startApprovalWorker(
  setup: ScenarioSetup,
  config: ApprovalWorkerConfig,
): WorkerProcess {
  return WorkerProcess.start(setup.worker, [JSON.stringify(config)]);
}

/** Runs a worker to its end and returns its `result` reports (failing on a crash). */
export async function runApprovalWorker(
  setup: ScenarioSetup,
  config: ApprovalWorkerConfig,
): Promise<Report[]> {
  const worker = startApprovalWorker(setup, config);
  const exit = await worker.exited;
  expect(exit, `worker crashed: ${exit.stderr}`).toMatchObject({ code: 0 });
  return worker.events("result");
}

/** Side effects in the ledger by label: raw count and distinct keys. */
export function effectsByLabel(
  ledger: Ledger,
  thread: string,
): Record<string, { raw: number; keys: number; values: unknown[] }> {
  const out: Record<string, { raw: number; keys: Set<string>; values: unknown[] }> = {};
  for (const entry of ledger.where({ thread })) {
    const label = String(entry.label);
    const slot = (out[label] ??= { raw: 0, keys: new Set(), values: [] });
    slot.raw += 1;
    slot.keys.add(String(entry.key));
    slot.values.push(entry.value);
  }
  return Object.fromEntries(
    Object.entries(out).map(([k, v]) => [k, { raw: v.raw, keys: v.keys.size, values: v.values }]),
  );
}

async function withStore<T>(
  setup: ScenarioSetup,
  fn: (saver: Checkpointer) => Promise<T>,
): Promise<T> {
  const saver = await setup.open();
  try {
    return await fn(saver);
  } finally {
    await saver.close();
  }
}

/** Starts a thread whose run pauses on `ask`'s first question; returns its run id. */
async function startPaused(
  setup: ScenarioSetup,
  base: Omit<ApprovalWorkerConfig, "steps">,
): Promise<string> {
  const [started] = await runApprovalWorker(setup, {
    ...base,
    steps: [{ op: "invoke", input: { note: "start" } }],
  });
  expect(started).toMatchObject({ ok: true, status: "interrupted" });
  return String(started?.runId);
}

/**
 * SIGSTOP past the lease, then SIGCONT (issue 8, defect 1). A resumes the first answer and stops
 * inside `ask` after charging it; its lease expires; B takes over, answers the second question
 * and finishes the run; A wakes. The store must still say what B left: both interrupts answered
 * with their answers, the run `done`, nothing pending, each charge made once.
 */
export async function runPausedOwnerScenario(
  setup: ScenarioSetup,
  threadId: string,
): Promise<void> {
  const ttlMs = 600;
  const ledger = new Ledger(join(setup.dir, `${threadId}.ledger`));
  const base = { threadId, ledger: ledger.path, questions: 2 as const, ttlMs };
  const runId = await startPaused(setup, base);

  const a = startApprovalWorker(setup, {
    ...base,
    holdAfterFirst: true,
    steps: [{ op: "resume", answer: "first-yes" }],
  });
  try {
    await a.waitForEvent("hold");
    a.signal("SIGSTOP");
    // Well past the ttl: A cannot renew while stopped.
    await sleep(ttlMs * 3);
    const results = await runApprovalWorker(setup, {
      ...base,
      steps: [{ op: "continue" }, { op: "resume", answer: "second-yes" }],
    });
    expect(results[0], "B's continue pauses on the second question").toMatchObject({
      ok: true,
      status: "interrupted",
    });
    expect(results[1], "B's answer finishes the run").toMatchObject({ ok: true, status: "done" });
  } finally {
    a.signal("SIGCONT");
  }
  a.send("go");
  const aExit = await a.exited;
  expect(aExit.code, `A crashed after waking: ${aExit.stderr}`).toBe(0);

  await withStore(setup, async (saver) => {
    const rows = await saver.getThreadInterrupts(threadId as ThreadId);
    const byQuestion = (q: string) =>
      rows.filter((r) => (r.payload as { question?: string }).question === q);
    const first = byQuestion("approve the first charge?");
    const second = byQuestion("approve the second charge?");
    expect(first.map((r) => [r.status, r.answer])).toEqual([["answered", "first-yes"]]);
    expect(
      second.map((r) => [r.status, r.answer]),
      "the answered interrupt stays answered with its answer",
    ).toEqual([["answered", "second-yes"]]);
    const pending = await saver.listInterrupts({
      threadId: threadId as ThreadId,
      status: "pending",
    });
    expect(
      pending.items.map((i) => i.id),
      "no phantom pending item in the queue",
    ).toEqual([]);
    const run = await saver.getRun(runId as never);
    expect(run?.status, "a finished run never regresses").toBe("done");
  });
  const effects = effectsByLabel(ledger, threadId);
  expect(effects["charge-1"], "the first charge ran once").toMatchObject({ raw: 1, keys: 1 });
  expect(effects["charge-2"], "the second charge ran once").toMatchObject({
    raw: 1,
    keys: 1,
    values: ["second-yes"],
  });
}

/**
 * Answer, SIGKILL, then new plain input (issue 8, defect 2). The resuming process dies right
 * after its answer commits, before the run continues. The next plain input must not start a
 * fresh run that loses the answer: it is refused with a typed error, or the answer is continued
 * first. Either way the answered step takes effect exactly once.
 */
export async function runAnswerKillInputScenario(
  setup: ScenarioSetup,
  threadId: string,
): Promise<void> {
  const ttlMs = 600;
  const ledger = new Ledger(join(setup.dir, `${threadId}.ledger`));
  const base = { threadId, ledger: ledger.path, questions: 1 as const, ttlMs };
  const runId = await startPaused(setup, base);

  const killed = startApprovalWorker(setup, {
    ...base,
    killAfterAnswer: true,
    steps: [{ op: "resume", answer: "yes" }],
  });
  const exit = await killed.exited;
  expect(killed.events("answer-committed"), "the worker reached the kill point").toHaveLength(1);
  expect(exit.signal).toBe("SIGKILL");

  const [input] = await runApprovalWorker(setup, {
    ...base,
    steps: [{ op: "invoke", input: { note: "new input" } }],
  });
  if (input?.ok === false)
    expect(
      input.code,
      `plain input is refused with a typed error: ${String(input.message)}`,
    ).toEqual(expect.any(String));
  // Whatever the input did, continuing the thread now must have applied the answer.
  const [continued] = await runApprovalWorker(setup, { ...base, steps: [{ op: "continue" }] });
  expect(continued?.ok, JSON.stringify(continued)).toBe(true);

  const effects = effectsByLabel(ledger, threadId);
  expect(
    effects["charge-1"]?.values.filter((v) => v === "yes"),
    "the answered step took effect exactly once",
  ).toEqual(["yes"]);
  await withStore(setup, async (saver) => {
    const run = await saver.getRun(runId as never);
    expect(run?.status, "the answered run was continued to its end").toBe("done");
  });
}

/** Starts `n` workers that each wait for `go`, releases them together and returns their results. */
async function race(
  setup: ScenarioSetup,
  n: number,
  config: ApprovalWorkerConfig,
): Promise<Report[]> {
  const steps: WorkerStep[] = [{ op: "wait", line: "go" }, ...config.steps];
  const workers = Array.from({ length: n }, () => startApprovalWorker(setup, { ...config, steps }));
  await Promise.all(workers.map((w) => w.waitForEvent("waiting", 60_000)));
  for (const w of workers) w.send("go");
  const exits = await Promise.all(workers.map((w) => w.exited));
  exits.forEach((e) => expect(e.code, `racer crashed: ${e.stderr}`).toBe(0));
  return workers.map((w) => w.events("result")[0] ?? { ok: false, message: "no result" });
}

/**
 * 8 processes retry one resume with the same request id at once (issue 8, defect 5): all get the
 * same outcome, the answer applies once, none is told that nothing was applied.
 */
export async function runResumeRetryRace(
  setup: ScenarioSetup,
  threadId: string,
  rounds = 4,
): Promise<void> {
  for (let round = 0; round < rounds; round += 1) {
    const thread = `${threadId}-${round}`;
    const ledger = new Ledger(join(setup.dir, `${thread}.ledger`));
    const base = { threadId: thread, ledger: ledger.path, questions: 1 as const, ttlMs: 2000 };
    const runId = await startPaused(setup, base);
    const results = await race(setup, 8, {
      ...base,
      // Store calls at random speeds: the racers interleave all through the answer protocol.
      jitterMs: 100,
      steps: [{ op: "resume", answer: "yes", requestId: `req-${thread}` }],
    });
    const summary = results.map((r) =>
      r.ok === true
        ? { ok: true, status: r.status, runId: r.runId, checkpointId: r.checkpointId }
        : { ok: false, code: r.code, message: r.message },
    );
    expect(summary, `round ${round}: every retry gets the first call's outcome`).toEqual(
      Array.from({ length: 8 }, () => ({
        ok: true,
        status: "done",
        runId,
        checkpointId: summary.find((r) => r.ok)?.checkpointId ?? "(none succeeded)",
      })),
    );
    expect(effectsByLabel(ledger, thread)["charge-1"]).toMatchObject({ raw: 1, keys: 1 });
    await withStore(setup, async (saver) => {
      const answers = (await saver.listAudit({ threadId: thread as ThreadId })).items.filter(
        (a) => a.action === "answer",
      );
      expect(answers, `round ${round}: exactly one application`).toHaveLength(1);
    });
  }
}

/**
 * 8 processes retry one `invoke` with the same request id at once (issue 8, "idempotent calls";
 * `invoke(input, { requestId })` is the API the issue asks for): one run, one charge, and all
 * eight get that run's outcome.
 */
export async function runInvokeRetryRace(setup: ScenarioSetup, threadId: string): Promise<void> {
  const ledger = new Ledger(join(setup.dir, `${threadId}.ledger`));
  const base = { threadId, ledger: ledger.path, questions: 0 as const, ttlMs: 2000 };
  const results = await race(setup, 8, {
    ...base,
    steps: [{ op: "invoke", input: { note: "order 1" }, requestId: `inv-${threadId}` }],
  });
  const summary = results.map((r) =>
    r.ok === true ? { ok: true, status: r.status, runId: r.runId } : { ok: false, code: r.code },
  );
  expect(summary, "every retry gets the first call's outcome").toEqual(
    Array.from({ length: 8 }, () => ({
      ok: true,
      status: "done",
      runId: summary.find((r) => r.ok)?.runId ?? "(none succeeded)",
    })),
  );
  const effects = effectsByLabel(ledger, threadId);
  expect(effects["prep"], "one run, one idempotency key: one charge").toMatchObject({ keys: 1 });
  expect(effects["charge-1"]).toMatchObject({ keys: 1 });
  await withStore(setup, async (saver) => {
    expect(await saver.listRuns(threadId as ThreadId), "one run for one request id").toHaveLength(
      1,
    );
  });
}

/**
 * A lease release that fails after the run committed (issue 8, defect 5): the caller gets the
 * run's outcome, not the release error (the lease simply expires), and the answer applied once.
 */
export async function runFailedReleaseScenario(
  setup: ScenarioSetup,
  threadId: string,
): Promise<void> {
  const ledger = new Ledger(join(setup.dir, `${threadId}.ledger`));
  const base = { threadId, ledger: ledger.path, questions: 1 as const, ttlMs: 600 };
  const runId = await startPaused(setup, base);
  const [resumed] = await runApprovalWorker(setup, {
    ...base,
    failLeaseRelease: true,
    steps: [{ op: "resume", answer: "yes", requestId: `req-${threadId}` }],
  });
  expect(resumed, "the committed outcome is returned, not the release error").toMatchObject({
    ok: true,
    status: "done",
    runId,
  });
  expect(effectsByLabel(ledger, threadId)["charge-1"]).toMatchObject({
    raw: 1,
    keys: 1,
    values: ["yes"],
  });
}
