/**
 * `@rein/core/testing/runtime`: the runtime contract suite. Each store runs it to prove that the
 * contracts of interrupts, targeted resume and steering hold on that store.
 *
 * Each concern is one file whose function registers its contracts with vitest's `it`, so a
 * single contract can be focused with `it.only` or run from an editor.
 *
 * @example
 * ```ts
 * import { runRuntimeContracts } from "@rein/core/testing/runtime";
 * runRuntimeContracts({ name: "sqlite", create: async () => new SqliteSaver({ path: ":memory:" }), destroy: (s) => s.close() });
 * ```
 *
 * @module
 */
import { describe } from "vitest";
import { approvalContracts } from "./approvals.ts";
import { bulkContracts } from "./bulk.ts";
import { busyThreadContracts } from "./busy-thread.ts";
import { cancellationContracts } from "./cancellation.ts";
import { childRunContracts } from "./child-runs.ts";
import { deadlineContracts } from "./deadlines.ts";
import { determinismContracts } from "./determinism.ts";
import { runtimeEnv, type RuntimeTestInitializer } from "./harness.ts";
import { idErrorContracts } from "./ids-errors.ts";
import { parallelInterruptContracts, sendArgumentContracts } from "./parallel-interrupts.ts";
import { pausingContracts } from "./pausing.ts";
import { pendingPageContracts } from "./pending-page.ts";
import { queueContracts } from "./queue.ts";
import { refusedInputContracts } from "./refused-inputs.ts";
import { staticInterruptContracts } from "./static-interrupts.ts";
import { steeringEdgeContracts } from "./steering-edges.ts";
import { steeringContracts } from "./steering.ts";
import { storedAnswerContracts } from "./stored-answers.ts";
import { targetedResumeContracts } from "./targeted-resume.ts";
import { typedAnswerContracts } from "./typed-answers.ts";
import { wideFanOutContracts } from "./wide-fan-out.ts";
import { writerContracts } from "./writers.ts";

export type { RuntimeTestInitializer } from "./harness.ts";
export { Counter } from "./harness.ts";
export { pauseResumeGraph } from "./graphs.ts";
export { crashGraph, crashWorkerMain, runAnswerRace, runCrashScenario } from "./crash.ts";
export type { WorkerCommand } from "./crash.ts";

/** Registers every runtime contract (vitest tests) against fresh stores of one backend. */
export function runRuntimeContracts(init: RuntimeTestInitializer): void {
  const env = runtimeEnv(init);
  describe(`runtime contracts on ${init.name}`, () => {
    describe("interrupts: pausing and answering", () => pausingContracts(env));
    describe("interrupts: parallel questions", () => parallelInterruptContracts(env));
    describe("interrupts: Send arguments across re-runs", () => sendArgumentContracts(env));
    describe("interrupts: the pending page of a result", () => pendingPageContracts(env));
    describe("interrupts: refused inputs", () => refusedInputContracts(env));
    describe("interrupts: determinism guard", () => determinismContracts(env));
    describe("interrupts: before and after nodes", () => staticInterruptContracts(env));
    describe("run trees: child runs", () => childRunContracts(env));
    describe("run trees: targeted resume", () => targetedResumeContracts(env));
    describe("run trees: steering", () => steeringContracts(env));
    describe("interrupt queue", () => queueContracts(env));
    describe("deadlines", () => deadlineContracts(env));
    describe("steering edge cases", () => steeringEdgeContracts(env));
    describe("typed answers", () => typedAnswerContracts(env));
    describe("ids, errors and side effects", () => idErrorContracts(env));
    describe("one writer per thread", () => writerContracts(env));
    describe("answers stored but not continued", () => storedAnswerContracts(env));
    describe("one writer per thread: a live run", () => busyThreadContracts(env));
    describe("wide fan-out", () => wideFanOutContracts(env));
    describe("cancellation", () => cancellationContracts(env));
    describe("governance: approval policies", () => approvalContracts(env));
    describe("governance: bulk decisions", () => bulkContracts(env));
  });
}
