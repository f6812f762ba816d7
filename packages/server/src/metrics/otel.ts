/**
 * The OpenTelemetry side of Rein's metrics: instruments of `metrics.getMeter("rein")` through
 * `@opentelemetry/api` only. Without a registered MeterProvider the API hands out no-op
 * instruments; the application registers its own (an SDK with the exporter it wants). The API's
 * global provider is no proxy, so instruments are made anew whenever the registered provider
 * changes (a provider registered after the server started is used from its next recording).
 */
import {
  metrics,
  type Attributes,
  type Counter,
  type Histogram,
  type MeterProvider,
  type ObservableGauge,
} from "@opentelemetry/api";
import type { PendingSummary } from "@rein/core/store";
import { DECISION_BUCKETS, LATENCY_BUCKETS, Metrics, type MetricSpec } from "./names.ts";

/** Reads the pending approvals of one server (cached by its caller). */
export type PendingSource = () => Promise<PendingSummary[]>;

/** The instruments of one provider. */
export interface OtelInstruments {
  decisionTime: Histogram;
  answers: Counter;
  escalations: Counter;
  webhookDeliveries: Counter;
  webhookDuration: Histogram;
  runsStarted: Counter;
  runsFinished: Counter;
  httpRequests: Counter;
  httpDuration: Histogram;
}

/** The pending-approval sources of every live server of this process. */
const sources = new Set<PendingSource>();
let current: { provider: MeterProvider; instruments: OtelInstruments } | null = null;

const options = (spec: MetricSpec, buckets?: number[]) => ({
  description: spec.help,
  unit: spec.unit,
  ...(buckets ? { advice: { explicitBucketBoundaries: buckets } } : {}),
});

/** Observes every live server's pending approvals into the two gauges. */
async function observePending(
  pending: ObservableGauge,
  oldest: ObservableGauge,
  observe: (gauge: ObservableGauge, value: number, attributes: Attributes) => void,
): Promise<void> {
  const now = Date.now();
  for (const source of sources) {
    const groups = await source().catch(() => []);
    for (const group of groups) {
      const attributes = { tenant: group.tenant ?? "", graph: group.rootGraph };
      observe(pending, group.count, attributes);
      observe(oldest, Math.max(0, (now - Date.parse(group.oldestCreatedAt)) / 1000), attributes);
    }
  }
}

function create(provider: MeterProvider): OtelInstruments {
  const meter = provider.getMeter("rein");
  const pending = meter.createObservableGauge(Metrics.pending.otel, options(Metrics.pending));
  const oldest = meter.createObservableGauge(Metrics.oldestAge.otel, options(Metrics.oldestAge));
  meter.addBatchObservableCallback(
    (result) =>
      observePending(pending, oldest, (gauge, value, attributes) =>
        result.observe(gauge, value, attributes),
      ),
    [pending, oldest],
  );
  return {
    decisionTime: meter.createHistogram(
      Metrics.decisionTime.otel,
      options(Metrics.decisionTime, DECISION_BUCKETS),
    ),
    answers: meter.createCounter(Metrics.answers.otel, options(Metrics.answers)),
    escalations: meter.createCounter(Metrics.escalations.otel, options(Metrics.escalations)),
    webhookDeliveries: meter.createCounter(
      Metrics.webhookDeliveries.otel,
      options(Metrics.webhookDeliveries),
    ),
    webhookDuration: meter.createHistogram(
      Metrics.webhookDuration.otel,
      options(Metrics.webhookDuration, LATENCY_BUCKETS),
    ),
    runsStarted: meter.createCounter(Metrics.runsStarted.otel, options(Metrics.runsStarted)),
    runsFinished: meter.createCounter(Metrics.runsFinished.otel, options(Metrics.runsFinished)),
    httpRequests: meter.createCounter(Metrics.httpRequests.otel, options(Metrics.httpRequests)),
    httpDuration: meter.createHistogram(
      Metrics.httpDuration.otel,
      options(Metrics.httpDuration, LATENCY_BUCKETS),
    ),
  };
}

/** The instruments of the currently registered provider (made on first use after a change). */
export function otel(): OtelInstruments {
  const provider = metrics.getMeterProvider();
  if (current?.provider !== provider) current = { provider, instruments: create(provider) };
  return current.instruments;
}

/**
 * Adds a server's pending approvals to the `rein.approvals.*` gauges until the returned function
 * is called (at the server's close).
 */
export function addPendingSource(source: PendingSource): () => void {
  sources.add(source);
  otel();
  return () => sources.delete(source);
}
