/**
 * Statuses between Rein and LangGraph's protocol, both ways. A thread is `busy` while a run holds
 * or waits for it, `interrupted` while questions are pending, `error` when its last run failed,
 * else `idle`. A run that paused is `success` (as LangGraph's server reports the pausing run; the
 * thread says `interrupted`); a cancelled run is `interrupted` with its `cancel_reason`.
 */
import type { RunStatus } from "@rein/core";

/** A thread's status in the protocol. */
export type LgThreadStatus = "idle" | "busy" | "interrupted" | "error";

/** A run's status in the protocol. */
export type LgRunStatus = "pending" | "running" | "error" | "success" | "timeout" | "interrupted";

/** What a thread's protocol status is computed from. */
export interface ThreadFacts {
  /** A process holds the thread's lease (a run executes). */
  leased: boolean;
  /** A root run of the thread is queued. */
  queued: boolean;
  /** Questions pending on the thread. */
  pending: number;
  /** Status of the thread's latest root run, if any. */
  lastRun: RunStatus | null;
}

/** The protocol status of a thread. */
export function threadStatusOf(facts: ThreadFacts): LgThreadStatus {
  if (facts.leased || facts.queued) return "busy";
  if (facts.pending > 0) return "interrupted";
  if (facts.lastRun === "error") return "error";
  return "idle";
}

/** The protocol status of a run. */
export function runStatusOf(status: RunStatus): LgRunStatus {
  switch (status) {
    case "queued":
      return "pending";
    case "running":
      return "running";
    case "done":
    case "interrupted":
      return "success";
    case "error":
      return "error";
    case "cancelled":
      return "interrupted";
  }
}

/** The Rein run statuses a protocol run status filter selects. */
export function reinRunStatuses(status: LgRunStatus): RunStatus[] {
  switch (status) {
    case "pending":
      return ["queued"];
    case "running":
      return ["running"];
    case "success":
      return ["done", "interrupted"];
    case "error":
      return ["error"];
    case "interrupted":
      return ["cancelled"];
    case "timeout":
      return [];
  }
}

/** Why a cancelled run ended, as the protocol's `cancel_reason`; null for other runs. */
export function cancelReasonOf(status: RunStatus): string | null {
  return status === "cancelled" ? "cancelled" : null;
}
