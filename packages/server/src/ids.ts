/**
 * Branding the ids the server reads at its edge — URL parameters, request bodies, webhook events,
 * signed link claims, records of the store's side tables — as the types core takes. One helper
 * per id type, so the server holds one cast per type, here, instead of one per call site.
 *
 * These brand without checking: every value they take is a string that either came from Rein
 * (an event, a record, a link Rein signed) or goes to a store read that answers "not found" for
 * an id no thread, run or interrupt has. Thread ids a caller creates are checked by core's
 * `validateThreadId` where threads are made.
 */
import type { InterruptId, RunId, TaskId, ThreadId } from "@rein/core";

/** `value` as a thread id. */
export function threadIdOf(value: string): ThreadId {
  return value as ThreadId;
}

/** `value` as a run id. */
export function runIdOf(value: string): RunId {
  return value as RunId;
}

/** `value` as an interrupt id. */
export function interruptIdOf(value: string): InterruptId {
  return value as InterruptId;
}

/** `value` as a task id (also the `kind` of a `ctx.once` slot, which shares its column). */
export function taskIdOf(value: string): TaskId {
  return value as TaskId;
}
