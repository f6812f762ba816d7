/**
 * Wiring a process's metrics in: the store view that counts answers, the observer of runs and
 * the observer of webhook attempts, all recording into one {@link ReinMetrics}. `createServer`
 * and `rein worker` both use it.
 */
import { hasCapability, type Checkpointer } from "@rein/core";
import type { WebhookAttemptResult } from "@rein/core/store";
import type { RunObserver } from "../run-manager.ts";
import { observeAnswers } from "./answers.ts";
import { ReinMetrics, type ReinMetricsOptions } from "./recorder.ts";

/** A process's metrics and the hooks that feed them. */
export interface MetricsWiring {
  metrics: ReinMetrics;
  /** The store to compile graphs and run work against: its applied answers are counted. */
  store: Checkpointer;
  /** For `RunManager.observe`. */
  runs: RunObserver;
  /** For the webhook delivery loop. */
  onAttempt: (attempt: WebhookAttemptResult) => void;
}

/**
 * Metrics over `store` (its pending approvals read through `summarizePending` when it declares the `pendingSummaries` capability).
 */
export function wireMetrics(
  store: Checkpointer,
  options: Omit<ReinMetricsOptions, "pending"> = {},
): MetricsWiring {
  const metrics = new ReinMetrics({
    ...options,
    pending: hasCapability(store, "pendingSummaries")
      ? store.summarizePending.bind(store)
      : undefined,
  });
  return {
    metrics,
    store: observeAnswers(store, metrics),
    runs: {
      started: (kind) => metrics.runStarted(kind),
      finished: (kind, status) => metrics.runFinished(kind, status),
    },
    onAttempt: (attempt) => metrics.webhookAttempt(attempt.outcome, attempt.durationMs / 1000),
  };
}
