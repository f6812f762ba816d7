/**
 * `@rein/core/testing`: the checkpointer conformance suite and record builders for tests.
 *
 * Every backend runs the same suite from a three-line test file:
 *
 * @example
 * ```ts
 * import { runCheckpointerConformance } from "@rein/core/testing";
 * import { SqliteSaver } from "@rein/sqlite";
 *
 * runCheckpointerConformance({
 *   name: "sqlite",
 *   create: () => Promise.resolve(new SqliteSaver({ path: ":memory:" })),
 *   destroy: (saver) => saver.close(),
 * });
 * ```
 *
 * The suite is written against vitest (a peer dependency): import it only from test files.
 *
 * @module
 */
import { registerSuite, type CheckpointerTestInitializer } from "./suite.ts";
import { answerReadSpecs } from "./specs/answer-reads.ts";
import { answerSpecs } from "./specs/answers.ts";
import { auditChainSpecs } from "./specs/audit-chain.ts";
import { callReadSpecs } from "./specs/call-reads.ts";
import { channelBlobSpecs } from "./specs/channel-blobs.ts";
import { checkpointSpecs } from "./specs/checkpoints.ts";
import { deleteSpecs } from "./specs/delete.ts";
import { fencedWriteSpecs } from "./specs/fenced-writes.ts";
import { fencingSpecs } from "./specs/fencing.ts";
import { interruptSpecs } from "./specs/interrupts.ts";
import { leaseSpecs } from "./specs/leases.ts";
import { narrowReadSpecs } from "./specs/narrow-reads.ts";
import { onceSpecs } from "./specs/once.ts";
import { queueFilterSpecs } from "./specs/queue-filters.ts";
import { runSpecs } from "./specs/runs.ts";
import { serializationSpecs } from "./specs/serialization.ts";
import { steeringAuditSpecs } from "./specs/steering-audit.ts";
import { taskResultSpecs } from "./specs/task-results.ts";
import { threadSpecs } from "./specs/threads.ts";

export type { CheckpointerTestInitializer, SpecRegistry, SpecTime } from "./suite.ts";
export * from "./fixtures.ts";
export * from "./queue-shapes.ts";

/** The spec files of the suite, in report order. */
const SPECS = [
  threadSpecs,
  checkpointSpecs,
  channelBlobSpecs,
  taskResultSpecs,
  interruptSpecs,
  queueFilterSpecs,
  answerSpecs,
  answerReadSpecs,
  narrowReadSpecs,
  callReadSpecs,
  runSpecs,
  steeringAuditSpecs,
  auditChainSpecs,
  onceSpecs,
  leaseSpecs,
  fencingSpecs,
  fencedWriteSpecs,
  serializationSpecs,
  deleteSpecs,
] as const;

/**
 * Registers the whole checkpointer conformance suite (vitest `describe`/`it`) for one backend.
 * Each spec gets a fresh store from `init.create()` and hands it to `init.destroy()` afterwards.
 */
export function runCheckpointerConformance(init: CheckpointerTestInitializer): void {
  registerSuite(init, SPECS);
}
export { makeSubscription, runWebhookConformance } from "./webhooks.ts";
export type { WebhookTestInitializer } from "./webhooks.ts";
