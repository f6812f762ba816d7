/**
 * `@rein/core/testing/runtime`: the runtime contract suite. Each store runs it to prove that the
 * contracts of interrupts, targeted resume and steering hold on that store.
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
import { registerContracts, type RuntimeTestInitializer } from "./harness.ts";
import { idErrorContracts } from "./ids-errors.ts";
import { interruptContracts } from "./interrupts.ts";
import { steeringEdgeContracts } from "./steering-edges.ts";
import { typedAnswerContracts } from "./typed-answers.ts";
import {
  deadlineContracts,
  deadlineTimerContracts,
  runTreeContracts,
  wideFanOutContracts,
} from "./run-trees.ts";
import { writerContracts } from "./writers.ts";

export type { RuntimeTestInitializer } from "./harness.ts";
export { Counter } from "./harness.ts";
export { crashGraph, crashWorkerMain, runAnswerRace, runCrashScenario } from "./crash.ts";
export type { WorkerCommand } from "./crash.ts";

/** Registers every runtime contract (vitest tests) against fresh stores of one backend. */
export function runRuntimeContracts(init: RuntimeTestInitializer): void {
  describe(`runtime contracts on ${init.name}`, () => {
    describe("interrupts", () => registerContracts(init, interruptContracts));
    describe("run trees and targeted steering", () => registerContracts(init, runTreeContracts));
    describe("deadlines", () =>
      registerContracts(init, [...deadlineContracts, ...deadlineTimerContracts]));
    describe("steering edge cases", () => registerContracts(init, steeringEdgeContracts));
    describe("typed answers", () => registerContracts(init, typedAnswerContracts));
    describe("ids, errors and side effects", () => registerContracts(init, idErrorContracts));
    describe("one writer per thread", () => registerContracts(init, writerContracts, 20_000));
    describe("wide fan-out", () => registerContracts(init, wideFanOutContracts, 180_000));
  });
}
