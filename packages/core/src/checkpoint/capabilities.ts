/**
 * Checking a store's declared capabilities: a feature asks for the capability it needs by name,
 * and gets the store typed with that capability's members, or a typed refusal. No `instanceof`
 * over known stores, no probing for methods.
 */
import { MissingCapabilityError } from "../errors.ts";
import type { RuntimeStore, StoreCapability, StoreCapabilityMap } from "./types.ts";

/** The capabilities record of a store that offers every capability (Rein's shipped stores). */
export const EVERY_CAPABILITY: { readonly [K in StoreCapability]: true } = Object.freeze({
  threadCatalog: true,
  auditChain: true,
  escalationLadder: true,
  bulkAnswers: true,
  pendingSummaries: true,
  webhookOutbox: true,
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
