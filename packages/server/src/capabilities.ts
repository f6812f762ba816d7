/**
 * What each feature of the server needs of its store beyond the runtime, checked once at start:
 * a store that lacks a capability a turned-on feature needs is refused with one line naming both,
 * instead of serving the feature half (no `instanceof` over known stores, no method probing).
 */
import {
  MissingCapabilityError,
  hasCapability,
  type Checkpointer,
  type RuntimeStore,
  type StoreCapability,
} from "@rein/core";

/** A feature the server serves and the capability it needs. */
export interface FeatureNeed {
  /** How the refusal names the feature. */
  feature: string;
  capability: StoreCapability;
}

/** The switches of the server that turn features on (a slice of its options). */
export interface FeatureSwitches {
  webhookDelivery?: unknown;
  notifiers?: readonly unknown[] | undefined;
  slack?: unknown;
}

/**
 * The capabilities the server's features need, given its switches. The thread, run, queue,
 * steering and audit routes, the deadline timer and the recovery sweep are always on; webhooks are on unless delivery is left to other
 * processes with nothing here to notify.
 */
export function featureNeeds(switches: FeatureSwitches): FeatureNeed[] {
  const needs: FeatureNeed[] = [];
  const notifying = (switches.notifiers?.length ?? 0) > 0 || switches.slack !== undefined;
  if (switches.webhookDelivery !== false || notifying)
    needs.push({ feature: "webhooks and notifications", capability: "webhookOutbox" });
  needs.push(
    {
      feature: "the thread routes (POST /threads, GET /threads, DELETE /threads/:id)",
      capability: "threadCatalog",
    },
    { feature: "the run and history routes", capability: "threadHistory" },
    { feature: "the approval queue (GET /interrupts)", capability: "interruptQueue" },
    { feature: "thread status and run admission", capability: "leaseStatus" },
    { feature: "the steering route", capability: "steering" },
    { feature: "the deadline timer", capability: "deadlineTimer" },
    { feature: "the recovery sweep", capability: "runRecovery" },
    {
      feature: "Idempotency-Key, decision links and Slack's records",
      capability: "sideRecords",
    },
    { feature: "the audit routes (/audit, /audit/verify)", capability: "auditChain" },
  );
  return needs;
}

/**
 * `store` as the server's routes use it, once every capability `switches` turn on is declared.
 * Members of a capability the store does not declare are never called: the features that would
 * call them were refused here, and the rest (bulk answers, pending summaries, the ladder) check
 * the store's capabilities where they are used.
 *
 * @throws {MissingCapabilityError} for the first turned-on feature whose capability is missing.
 */
export function servableStore(store: RuntimeStore, switches: FeatureSwitches): Checkpointer {
  for (const need of featureNeeds(switches))
    if (!hasCapability(store, need.capability))
      throw new MissingCapabilityError(need.capability, need.feature);
  return store as Checkpointer;
}
