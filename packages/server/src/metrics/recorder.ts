/**
 * One server's metrics: a Prometheus registry of its own (prom-client; never the global one, so
 * two servers in one process do not collide) and the OpenTelemetry instruments, recorded together
 * by the methods below so both carry the same values under matching names.
 */
import type { PendingSummary } from "@rein/core/store";
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type LabelValues,
} from "prom-client";
import {
  DECISION_BUCKETS,
  LATENCY_BUCKETS,
  Metrics,
  type ActorType,
  type Decision,
  type EscalationStage,
  type MetricSpec,
} from "./names.ts";
import { addPendingSource, otel } from "./otel.ts";

/** Options of {@link ReinMetrics}. */
export interface ReinMetricsOptions {
  /**
   * Reads the pending approvals (a store's `summarizePending`); absent: the pending gauges stay
   * empty.
   */
  pending?: (() => Promise<PendingSummary[]>) | undefined;
  /** How long one read of the pending approvals serves scrapes, ms. Default 2000. */
  pendingCacheMs?: number | undefined;
  /** Also export prom-client's default process metrics (`process_*`, `nodejs_*`). Default false. */
  processMetrics?: boolean | undefined;
}

/** One resolved interrupt, as {@link ReinMetrics.answered} records it. */
export interface ResolvedInterrupt {
  /** Root graph of its run tree. */
  graph: string;
  decision: Decision;
  actorType: ActorType;
  /** From its creation to its resolution. */
  seconds: number;
}

type Labels<S extends MetricSpec> = LabelValues<S["labels"][number]>;

function counter<S extends MetricSpec>(spec: S, registry: Registry) {
  return new Counter<S["labels"][number]>({
    name: spec.prom,
    help: spec.help,
    labelNames: spec.labels,
    registers: [registry],
  });
}

function histogram<S extends MetricSpec>(spec: S, registry: Registry, buckets: number[]) {
  return new Histogram<S["labels"][number]>({
    name: spec.prom,
    help: spec.help,
    labelNames: spec.labels,
    buckets,
    registers: [registry],
  });
}

/** Every live server's metrics, so {@link countEscalation} reaches them all. */
const live = new Set<ReinMetrics>();

/** The metrics of one server or worker. */
export class ReinMetrics {
  /** The Prometheus registry `/metrics` renders. */
  readonly registry = new Registry();
  readonly #answers = counter(Metrics.answers, this.registry);
  readonly #decisionTime = histogram(Metrics.decisionTime, this.registry, DECISION_BUCKETS);
  readonly #escalations = counter(Metrics.escalations, this.registry);
  readonly #webhookDeliveries = counter(Metrics.webhookDeliveries, this.registry);
  readonly #webhookDuration = histogram(Metrics.webhookDuration, this.registry, LATENCY_BUCKETS);
  readonly #runsStarted = counter(Metrics.runsStarted, this.registry);
  readonly #runsFinished = counter(Metrics.runsFinished, this.registry);
  readonly #httpRequests = counter(Metrics.httpRequests, this.registry);
  readonly #httpDuration = histogram(Metrics.httpDuration, this.registry, LATENCY_BUCKETS);
  /** Observations still being made (an answer's rows being read), awaited by a scrape. */
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #removeSource: () => void;
  #cached: { at: number; read: Promise<PendingSummary[]>; done: boolean } | null = null;

  constructor(options: ReinMetricsOptions = {}) {
    const read = options.pending;
    const cacheMs = options.pendingCacheMs ?? 2000;
    // Scrapes (Prometheus and OpenTelemetry both, and the two gauges of one scrape) share one
    // store read while it is in flight and for the cache period after, so however often they
    // come the store sees at most one aggregate query in that time.
    const pending = (): Promise<PendingSummary[]> => {
      if (!read) return Promise.resolve([]);
      const now = Date.now();
      const cached = this.#cached;
      if (cached && (!cached.done || now - cached.at < cacheMs)) return cached.read;
      const entry = { at: now, read: read(), done: false };
      this.#cached = entry;
      entry.read.then(
        () => (entry.done = true),
        () => {
          if (this.#cached === entry) this.#cached = null;
        },
      );
      return entry.read;
    };
    // Both gauges are computed at scrape time; a group with nothing pending any more leaves the
    // output.
    const gauge = (
      spec: typeof Metrics.pending | typeof Metrics.oldestAge,
      value: (group: PendingSummary, now: number) => number,
    ) =>
      new Gauge<"tenant" | "graph">({
        name: spec.prom,
        help: spec.help,
        labelNames: spec.labels,
        registers: [this.registry],
        async collect() {
          // A store that cannot be read leaves the series out (alert on `absent()`), rather
          // than failing the whole scrape.
          const groups = await pending().catch(() => []);
          const now = Date.now();
          this.reset();
          for (const group of groups)
            this.set({ tenant: group.tenant ?? "", graph: group.rootGraph }, value(group, now));
        },
      });
    gauge(Metrics.pending, (group) => group.count);
    gauge(Metrics.oldestAge, (group, now) =>
      Math.max(0, (now - Date.parse(group.oldestCreatedAt)) / 1000),
    );
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
    this.#removeSource = addPendingSource(pending);
    live.add(this);
  }

  /** Records resolved interrupts: the answers counter and the time-to-decision histogram. */
  answered(resolved: readonly ResolvedInterrupt[]): void {
    const instruments = otel();
    for (const item of resolved) {
      const labels = { graph: item.graph, decision: item.decision, actor_type: item.actorType };
      this.#answers.inc(labels);
      this.#decisionTime.observe(labels, item.seconds);
      instruments.answers.add(1, labels);
      instruments.decisionTime.record(item.seconds, labels);
    }
  }

  /**
   * Records one escalation ladder step (see {@link countEscalation}). `toOtel: false` records the
   * Prometheus side only (the OpenTelemetry instruments are the process's: one step is recorded
   * there once, however many servers share the process).
   */
  escalated(stage: EscalationStage, graph: string, toOtel = true): void {
    const labels: Labels<typeof Metrics.escalations> = { stage, graph };
    this.#escalations.inc(labels);
    if (toOtel) otel().escalations.add(1, labels);
  }

  /** Records one webhook delivery attempt. */
  webhookAttempt(outcome: "delivered" | "retry" | "dead", seconds: number): void {
    const instruments = otel();
    this.#webhookDeliveries.inc({ outcome });
    this.#webhookDuration.observe({ outcome }, seconds);
    instruments.webhookDeliveries.add(1, { outcome });
    instruments.webhookDuration.record(seconds, { outcome });
  }

  /** Records a run this process started executing. */
  runStarted(kind: string): void {
    this.#runsStarted.inc({ kind });
    otel().runsStarted.add(1, { kind });
  }

  /** Records a run this process finished executing. */
  runFinished(kind: string, status: string): void {
    this.#runsFinished.inc({ kind, status });
    otel().runsFinished.add(1, { kind, status });
  }

  /** Records an answered HTTP request. `route` is the route pattern, never the URL. */
  httpRequest(method: string, route: string, statusCode: number, seconds: number): void {
    const labels = { method, route, status_class: `${Math.floor(statusCode / 100)}xx` };
    const instruments = otel();
    this.#httpRequests.inc(labels);
    this.#httpDuration.observe(labels, seconds);
    instruments.httpRequests.add(1, labels);
    instruments.httpDuration.record(seconds, labels);
  }

  /** Keeps an observation in flight until it settles, so a scrape can wait for it. */
  track(observation: Promise<unknown>): void {
    const settled = observation.catch(() => undefined);
    this.#inFlight.add(settled);
    void settled.finally(() => this.#inFlight.delete(settled));
  }

  /**
   * The Prometheus text exposition, once the observations in flight settled (an answer applied
   * before the scrape is in it).
   */
  async render(): Promise<string> {
    await Promise.all(this.#inFlight);
    return this.registry.metrics();
  }

  /** The content type of {@link ReinMetrics.render}'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Leaves the process-wide OpenTelemetry gauges and {@link countEscalation}. */
  close(): void {
    this.#removeSource();
    live.delete(this);
  }
}

/**
 * Counts one step of an escalation ladder (`remind` or `escalate`) taken in this process, for
 * every live server's metrics: the escalation ladder calls it when it emits
 * `interrupt.reminded` / `interrupt.escalated`. `graph` is the interrupt's root graph.
 */
export function countEscalation(stage: EscalationStage, graph = ""): void {
  let first = true;
  for (const metrics of live) {
    metrics.escalated(stage, graph, first);
    first = false;
  }
}
