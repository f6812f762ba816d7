/**
 * A thread's runs in words: each run's status as a reviewer says it (`interrupted` is `paused`),
 * what it is waiting for, and what each pending question asks.
 */
import type { Interrupt, RunTree } from "@rein/client";
import { payloadSummary } from "./format.ts";

/** Statuses of runs and threads as a person says them. */
const STATUS_WORDS: Record<string, string> = {
  idle: "idle",
  queued: "queued",
  running: "running",
  interrupted: "paused",
  done: "done",
  error: "failed",
  cancelled: "cancelled",
};

/** A run's or thread's status in words: `interrupted` → `paused`, `error` → `failed`. */
export function statusWord(status: string): string {
  return STATUS_WORDS[status] ?? status;
}

/** A run's name: its namespace (`refund`, `refund › lookup`), the root by its graph. */
export function runName(run: Pick<RunTree, "namespace" | "graph">): string {
  return run.namespace.length > 0 ? run.namespace.join(" › ") : run.graph;
}

/** The runs of a tree, each before its children: the root first. */
export function runsOf(tree: RunTree): RunTree[] {
  return [tree, ...tree.children.flatMap(runsOf)];
}

/** What a pending interrupt asks, in words. */
export function pendingInWords(interrupt: Pick<Interrupt, "kind" | "node" | "payload">): string {
  if (interrupt.kind === "before") return `Paused before ${interrupt.node} runs`;
  if (interrupt.kind === "after") return `Paused after ${interrupt.node} ran`;
  return payloadSummary(interrupt.payload, 120);
}

const plural = (n: number, one: string, many: string) => (n === 1 ? one : `${n} ${many}`);

/**
 * Where a run stands, in a sentence: what a paused run waits for (its own questions, or the
 * sub-agents below it), why a failed one failed.
 */
export function standing(run: RunTree, pending: readonly { runId: string }[]): string {
  switch (run.status) {
    case "interrupted": {
      const own = pending.filter((i) => i.runId === run.runId).length;
      if (own > 0) return `Paused: waiting for ${plural(own, "an answer", "answers")}.`;
      const waiting = run.children.filter((c) => c.status === "interrupted").map(runName);
      if (waiting.length > 0)
        return `Paused: waiting for its sub-agent${waiting.length > 1 ? "s" : ""} ${waiting.join(", ")}.`;
      return "Paused.";
    }
    case "done":
      return "Done.";
    case "running":
      return "Running now.";
    case "queued":
      return "Queued: waiting for a worker to start it.";
    case "error":
      return run.error ? `Failed: ${run.error.message}` : "Failed.";
    case "cancelled":
      return "Cancelled.";
  }
}
