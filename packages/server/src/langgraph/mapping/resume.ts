/**
 * `command.resume` of LangGraph's protocol as a Rein answer. A value is a map of answers only
 * when it is an object whose every key is the id of an interrupt pending on the thread — decided
 * by exact match against the thread's pending ids, never by the keys' shape — so a map answers
 * exactly those interrupts and wakes only their tasks. Any other value is one answer, for the one
 * pending interrupt: with two or more pending it is refused as ambiguous (never applied to all),
 * and an object naming an interrupt that is no longer pending (or an id-shaped key the thread
 * does not know) is refused as stale.
 */
import { AmbiguousResumeError, type Interrupt } from "@rein/core";
import { answerFromUi } from "./approvals.ts";
import { isRecord } from "./json.ts";

/** Rein's answer of a `command.resume`. */
export type ResumeChoice =
  /** One answer for the one pending interrupt in scope (`Command.resume`). */
  | { kind: "one"; value: unknown }
  /** Answers by interrupt id (`Command.resumeMap`). */
  | { kind: "map"; answers: Record<string, unknown> }
  /** The value names interrupts that are not pending: refuse, applying nothing. */
  | { kind: "stale"; ids: string[] };

/** The shape of Rein's interrupt ids: a key of this shape is meant as an id, never as data. */
const INTERRUPT_ID = /^i_[A-Za-z0-9_-]{22}$/;

/**
 * Reads a `command.resume` against the thread's interrupts.
 *
 * @param pending the thread's pending interrupts.
 * @param known every interrupt of the thread (any status), to tell a consumed id from data.
 * @throws AmbiguousResumeError for one answer while two or more interrupts are pending (its
 *   details list them, with their ids).
 */
export function chooseResume(
  value: unknown,
  pending: readonly Interrupt[],
  known: readonly Interrupt[],
): ResumeChoice {
  const byId = new Map(pending.map((i) => [i.id as string, i]));
  if (isRecord(value)) {
    const keys = Object.keys(value);
    if (keys.length > 0 && keys.every((key) => byId.has(key))) {
      const answers: Record<string, unknown> = {};
      for (const key of keys) answers[key] = answerFromUi(byId.get(key)?.payload, value[key]);
      return { kind: "map", answers };
    }
    const knownIds = new Set(known.map((i) => i.id as string));
    const stale = keys.filter(
      (key) => !byId.has(key) && (knownIds.has(key) || INTERRUPT_ID.test(key)),
    );
    if (stale.length > 0) return { kind: "stale", ids: stale };
  }
  if (pending.length >= 2) throw new AmbiguousResumeError([...pending]);
  return { kind: "one", value: answerFromUi(pending[0]?.payload, value) };
}
