/**
 * Observing the answers applied through a store: a view of the store whose `answerInterrupts`
 * and `answerBatches` report each applied batch, so every path that resolves an interrupt in this
 * process — a resume, a bulk decision, the deadline timer, a cancellation — is counted without
 * the runtime knowing about metrics. The view is what the graphs are compiled against.
 */
import type { Checkpointer, InterruptId } from "@rein/core";
import {
  rootGraphOf,
  type AnswerBatch,
  type AnswerOutcome,
  type BatchesOutcome,
  type StoredInterrupt,
} from "@rein/core/store";
import type { ActorType, Decision } from "./names.ts";
import type { ReinMetrics, ResolvedInterrupt } from "./recorder.ts";

/** The answer value's decision: the tool-approval convention, `{ approved }`, or a plain value. */
export function decisionOf(value: unknown): Decision {
  if (value === true) return "approve";
  if (value === false) return "reject";
  if (typeof value !== "object" || value === null) return "value";
  const record = value as Record<string, unknown>;
  switch (record["type"] ?? record["decision"]) {
    case "accept":
    case "approve":
      return "approve";
    case "ignore":
    case "reject":
      return "reject";
    case "edit":
      return "edit";
    case "respond":
      return "respond";
  }
  if (record["approved"] === true) return "approve";
  if (record["approved"] === false) return "reject";
  return "value";
}

/** Who resolved a batch: the deadline timer, another `system:` actor, or a person. */
export function actorTypeOf(batch: Pick<AnswerBatch, "action" | "actor">): ActorType {
  if (batch.action === "timeout") return "timer";
  return batch.actor.startsWith("system:") ? "system" : "human";
}

/** What one applied batch resolved, given its rows as read after the answer. */
export function resolvedBy(
  batch: AnswerBatch,
  rows: readonly StoredInterrupt[],
  at: number,
): ResolvedInterrupt[] {
  const values = new Map(batch.answers.map((answer) => [answer.id as string, answer.value]));
  const actorType = actorTypeOf(batch);
  return rows
    .filter((row) => row.status === "answered" || row.status === "cancelled")
    .map((row) => ({
      graph: rootGraphOf(row),
      decision:
        batch.action === "timeout"
          ? "timeout"
          : row.status === "cancelled"
            ? "cancel"
            : decisionOf(values.get(row.id)),
      actorType,
      seconds: Math.max(0, (at - Date.parse(row.createdAt)) / 1000),
    }));
}

/**
 * The store, with each applied answer batch recorded in `metrics`: after the store applied it,
 * the resolved rows are read (by id, one indexed read) for their creation time and graph, off
 * the caller's path; a scrape waits for such reads in flight. Ids that only gained an approval
 * (still pending) are not counted.
 */
export function observeAnswers(store: Checkpointer, metrics: ReinMetrics): Checkpointer {
  const observe = (batch: AnswerBatch, recorded: readonly InterruptId[] | undefined): void => {
    const at = Date.now();
    const waiting = new Set<string>(recorded ?? []);
    const ids = [...batch.answers.map((a) => a.id), ...(batch.cancel ?? [])].filter(
      (id) => !waiting.has(id),
    );
    if (ids.length === 0) return;
    metrics.track(
      store.getInterrupts(ids).then((rows) => metrics.answered(resolvedBy(batch, rows, at))),
    );
  };
  const answerInterrupts = async (batch: AnswerBatch): Promise<AnswerOutcome> => {
    const outcome = await store.answerInterrupts(batch);
    if (outcome.ok) observe(batch, outcome.recorded);
    return outcome;
  };
  const answerBatches = async (batches: readonly AnswerBatch[]): Promise<BatchesOutcome> => {
    if (!store.answerBatches) throw new TypeError("This store has no answerBatches.");
    const outcome = await store.answerBatches(batches);
    if (outcome.ok)
      batches.forEach((batch, index) => observe(batch, outcome.outcomes[index]?.recorded));
    return outcome;
  };
  // The store's own methods, bound to it (stores keep private fields, so a prototype view would
  // not do), except the two answer writes above.
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property): unknown {
      if (property === "answerInterrupts") return answerInterrupts;
      if (property === "answerBatches") return target.answerBatches ? answerBatches : undefined;
      if (bound.has(property)) return bound.get(property);
      let value: unknown = Reflect.get(target, property, target);
      if (typeof value === "function") value = (value as () => unknown).bind(target);
      bound.set(property, value);
      return value;
    },
  });
}
