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
import type { RuntimeStore, StoreCapability } from "../checkpoint/types.ts";
import { RUNTIME_STORE_MEMBERS } from "../checkpoint/capabilities.ts";
import { answerReadSpecs } from "./specs/answer-reads.ts";
import { apiKeySpecs } from "./specs/api-keys.ts";
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
import { sideRecordSpecs } from "./specs/side-records.ts";
import { serializationSpecs } from "./specs/serialization.ts";
import { steeringAuditSpecs } from "./specs/steering-audit.ts";
import { taskResultSpecs } from "./specs/task-results.ts";
import { threadSpecs } from "./specs/threads.ts";

export type { CheckpointerTestInitializer, SpecRegistry, SpecTime } from "./suite.ts";
export * from "./fixtures.ts";
export * from "./queue-shapes.ts";
export * from "./legacy-side-records.ts";

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
  sideRecordSpecs,
  leaseSpecs,
  fencingSpecs,
  fencedWriteSpecs,
  serializationSpecs,
  deleteSpecs,
  apiKeySpecs,
] as const;

/**
 * Registers the whole checkpointer conformance suite (vitest `describe`/`it`) for one backend.
 * Each spec gets a fresh store from `init.create()` and hands it to `init.destroy()` afterwards.
 */
export function runCheckpointerConformance(init: CheckpointerTestInitializer): void {
  registerSuite(init, SPECS);
}

/**
 * How a store that may implement only the runtime store plugs into
 * {@link runRuntimeStoreConformance}.
 */
export interface RuntimeStoreTestInitializer extends Omit<
  CheckpointerTestInitializer,
  "create" | "destroy"
> {
  /** A fresh, empty store (see {@link CheckpointerTestInitializer.create}). */
  create(clock: () => Date): Promise<RuntimeStore>;
  /** Disposes of a store made by `create()`. */
  destroy(saver: RuntimeStore): Promise<void>;
}

/**
 * Registers the runtime store's specs (those that need no capability) against fresh stores of
 * one backend: the minimum a store passes to run every graph. A store with capabilities also
 * runs {@link runCapabilityConformance} for each, or {@link runCheckpointerConformance} for all.
 *
 * @example
 * ```ts
 * runRuntimeStoreConformance({ name: "mine", create: async () => new MyStore(), destroy: (s) => s.close() });
 * ```
 */
export function runRuntimeStoreConformance(init: RuntimeStoreTestInitializer): void {
  // The specs it takes declare no capability, so they call only the runtime store's members (a
  // run on a runtime-only store, core's runtime-only.test.ts, proves it).
  registerSuite(init as CheckpointerTestInitializer, SPECS, {
    title: "runtime store conformance",
    takes: (needs) => needs.length === 0,
  });
}

/** Registers the specs of one capability (those that declare it) against fresh stores. */
export function runCapabilityConformance(
  init: CheckpointerTestInitializer,
  capability: StoreCapability,
): void {
  registerSuite(init, SPECS, {
    title: `${capability} capability conformance`,
    takes: (needs) => needs.includes(capability),
  });
}

/**
 * `store` seen through the runtime store's members only, declaring no capability: what a store
 * that implements nothing more looks like to the runtime and to a server. A member outside the
 * runtime store is absent.
 */
export function runtimeOnly(store: RuntimeStore): RuntimeStore {
  const view: Record<string, unknown> = { capabilities: Object.freeze({}) };
  for (const member of RUNTIME_STORE_MEMBERS) {
    if (member === "capabilities") continue;
    const value: unknown = Reflect.get(store, member);
    view[member] = typeof value === "function" ? (value as () => unknown).bind(store) : value;
  }
  return view as unknown as RuntimeStore;
}
export { makeSubscription, runWebhookConformance } from "./webhooks.ts";
export type { WebhookTestInitializer } from "./webhooks.ts";
