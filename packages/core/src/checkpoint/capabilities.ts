/**
 * Checking a store's declared capabilities: a feature asks for the capability it needs by name,
 * and gets the store typed with that capability's members, or a typed refusal. No `instanceof`
 * over known stores, no probing for methods.
 */
import { MissingCapabilityError } from "../errors.ts";
import type {
  CheckpointerCapability,
  RuntimeStore,
  StoreCapability,
  StoreCapabilityMap,
} from "./types.ts";

/**
 * Every member of {@link RuntimeStore}, the minimum a store implements: what a runtime-only view
 * of a store keeps, and the count a store author's guide quotes. Compiles only while it names
 * every member (see below).
 */
export const RUNTIME_STORE_MEMBERS = [
  "serializer",
  "capabilities",
  "close",
  // threads
  "getThreadHead",
  // checkpoints
  "commitStep",
  "getCheckpoint",
  "getChannelValues",
  // task results
  "putTaskOutcome",
  "getTaskResults",
  // interrupts and answers
  "getInterrupts",
  "getThreadInterrupts",
  "answerInterrupts",
  // request results and ctx.once
  "putRequestResult",
  "getRequestResult",
  "getOnce",
  "putOnce",
  // runs
  "putRun",
  "getRun",
  // leases
  "acquireLease",
  "renewLease",
  "releaseLease",
] as const satisfies readonly (keyof RuntimeStore)[];

type UnlistedRuntimeMember = Exclude<keyof RuntimeStore, (typeof RUNTIME_STORE_MEMBERS)[number]>;
/** Compiles only while {@link RUNTIME_STORE_MEMBERS} names every member of the runtime store. */
export const EVERY_RUNTIME_MEMBER_LISTED: [UnlistedRuntimeMember] extends [never]
  ? true
  : UnlistedRuntimeMember = true;

/**
 * The capabilities record of a store that offers every capability of a {@link Checkpointer}
 * (Rein's shipped stores); a store that also offers an optional one (`leaseReads`) adds it.
 */
export const EVERY_CAPABILITY: { readonly [K in CheckpointerCapability]: true } = Object.freeze({
  threadCatalog: true,
  threadHistory: true,
  interruptQueue: true,
  deadlineTimer: true,
  runRecovery: true,
  steering: true,
  leaseStatus: true,
  sideRecords: true,
  auditChain: true,
  escalationLadder: true,
  narrowReads: true,
  bulkAnswers: true,
  pendingSummaries: true,
  webhookOutbox: true,
  apiKeys: true,
});

/** Whether `store` declares `capability` (and so implements its members). */
export function hasCapability<S extends RuntimeStore, K extends StoreCapability>(
  store: S,
  capability: K,
): store is S & StoreCapabilityMap[K] {
  return store.capabilities[capability] === true;
}

/**
 * `store`, typed with `capability`'s members.
 *
 * @throws {MissingCapabilityError} when the store does not declare it; `feature` names what
 *   needed it in the message.
 */
export function requireCapability<S extends RuntimeStore, K extends StoreCapability>(
  store: S,
  capability: K,
  feature: string,
): S & StoreCapabilityMap[K] {
  if (!hasCapability(store, capability)) throw new MissingCapabilityError(capability, feature);
  return store;
}

/** The capabilities of `wanted` that `store` does not declare, in the order asked. */
export function missingCapabilities(
  store: RuntimeStore,
  wanted: readonly StoreCapability[],
): StoreCapability[] {
  return wanted.filter((capability) => !hasCapability(store, capability));
}
