/**
 * Issue 8 ("one writer per thread") reproduced with real processes on SQLite: a stopped owner
 * waking after its lease expired, an answer whose process dies before continuing, and eight
 * concurrent retries of one request. See `@rein/core/testing/process` for the scenarios.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, it } from "vitest";
import {
  bundleWorker,
  runAnswerKillInputScenario,
  runFailedReleaseScenario,
  runInvokeRetryRace,
  runPausedOwnerScenario,
  runResumeRetryRace,
  type ScenarioSetup,
} from "@rein/core/testing/process";
import { SqliteSaver } from "./saver.ts";

const dir = mkdtempSync(join(tmpdir(), "rein-faults-"));
const db = join(dir, "rein.db");
const setup: ScenarioSetup = {
  worker: { command: process.execPath, args: [] },
  dir,
  open: () => Promise.resolve(new SqliteSaver({ path: db })),
};

beforeAll(async () => {
  const worker = await bundleWorker(
    fileURLToPath(new URL("./int/fault-worker.ts", import.meta.url)),
  );
  setup.worker = { ...worker, args: [...worker.args, db] };
  // Migrate once here so that racing workers only open an existing file.
  await (await setup.open()).close();
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("one writer per thread on SQLite, with real processes", () => {
  it("an owner stopped past its lease wakes without resetting answers or regressing the run", async () => {
    await runPausedOwnerScenario(setup, "stopped-owner");
  }, 90_000);

  it("plain input after an answer whose process died before continuing does not lose the answer", async () => {
    await runAnswerKillInputScenario(setup, "answer-kill-input");
  }, 90_000);

  it("8 concurrent retries of one resume request all get its outcome and apply it once", async () => {
    await runResumeRetryRace(setup, "resume-retries");
  }, 90_000);

  it("a lease release failing after the run committed does not replace its outcome", async () => {
    await runFailedReleaseScenario(setup, "failed-release");
  }, 90_000);

  it("8 concurrent retries of one invoke request start one run and charge once", async () => {
    await runInvokeRetryRace(setup, "invoke-retries");
  }, 90_000);
});
