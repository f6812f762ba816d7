/**
 * `@rein/core/testing/process`: real-process fault testing. Spawn workers that run a graph on a
 * store, stop, continue or kill them at points they report, count side effects in an
 * append-only ledger, and run the shared fault scenarios and the crash loop on any backend.
 *
 * A backend provides tiny worker scripts (open the store, call {@link approvalWorkerMain} or
 * {@link crashLoopWorkerMain}); its test files bundle them with {@link bundleWorker} and drive
 * them with the scenario functions.
 *
 * @module
 */
export { bundleWorker } from "./bundle.ts";
export { closeInput, describeFailure, nextLine, report, waitForLine } from "./child.ts";
export { hookSaver, jitterSaver } from "./hooks.ts";
export type { SaverHooks } from "./hooks.ts";
export { Ledger } from "./ledger.ts";
export type { LedgerEntry } from "./ledger.ts";
export { WorkerProcess } from "./worker.ts";
export type { Exit, ProcessCommand, Report } from "./worker.ts";
export { approvalGraph, approvalWorkerMain } from "./approval.ts";
export type { ApprovalWorkerConfig, EffectRecord, WorkerStep } from "./approval.ts";
export {
  effectsByLabel,
  runAnswerKillInputScenario,
  runApprovalWorker,
  runFailedReleaseScenario,
  runInvokeRetryRace,
  runPausedOwnerScenario,
  runResumeRetryRace,
  startApprovalWorker,
} from "./scenarios.ts";
export type { ScenarioSetup } from "./scenarios.ts";
export { crashLoopGraph, crashLoopWorkerMain, runCrashLoop } from "./crash-loop.ts";
export type {
  CrashLoopCounts,
  CrashLoopLane,
  CrashLoopOptions,
  CrashLoopWorkerConfig,
} from "./crash-loop.ts";
