/**
 * Metrics over real HTTP, on SQLite and on Postgres: `/metrics` reports exactly the pending
 * approvals the store holds by tenant and graph; answers (a person's, a bulk decision, the
 * deadline timer) move the counters and the time-to-decision histogram; a failing webhook
 * receiver counts retries and dead letters; scraping needs the metrics token or scope; the HTTP
 * metric has one series per route pattern however many URLs were asked; and the same values
 * arrive through OpenTelemetry's metrics API.
 */
import { metrics } from "@opentelemetry/api";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type Histogram,
} from "@opentelemetry/sdk-metrics";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openAuth, tokenAuth, type TokenConfig } from "./auth.ts";
import { countEscalation } from "./metrics/recorder.ts";
import {
  TOKENS,
  client,
  postgresBackend,
  sqliteBackend,
  startTestServer,
  type Backend,
  type TestServer,
  type TestStore,
} from "./testing/harness.ts";
import { escalating } from "./testing/ladder-graphs.ts";
import { TestReceiver } from "./testing/receiver.ts";

type Json = Record<string, unknown>;

/** A scraper's token: the `metrics` scope only. */
const SCRAPER: TokenConfig = {
  token: "scraper-token-0123456789",
  subject: "prometheus",
  tenant: "ops",
  scopes: ["metrics"],
};
/** The `--metrics-token` of the tests. */
const METRICS_TOKEN = "metrics-token-0123456789";

/** One sample of the Prometheus text: name, labels, value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text exposition (comment lines skipped). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The samples of `name`, each as its labels (sorted keys) → value. */
function series(samples: Sample[], name: string): Record<string, number> {
  return Object.fromEntries(
    samples
      .filter((s) => s.name === name)
      .map((s) => [
        Object.entries(s.labels)
          .filter(([key]) => key !== "le")
          .map(([key, value]) => `${key}=${value}`)
          .join(","),
        s.value,
      ]),
  );
}

const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
const provider = new MeterProvider({ readers: [reader] });

/** The OpenTelemetry data points of one instrument, after a collection. */
async function otelPoints(name: string): Promise<DataPoint<number | Histogram>[]> {
  exporter.reset();
  await reader.forceFlush();
  const last = exporter.getMetrics().at(-1);
  return (
    last?.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .filter((metric) => metric.descriptor.name === name)
      .flatMap((metric) => metric.dataPoints as DataPoint<number | Histogram>[]) ?? []
  );
}

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`metrics on ${backend.name}`, () => {
    let store: TestStore;
    let server: TestServer;
    let receiver: TestReceiver;
    const alice = (): ReturnType<typeof client> => client(server.url, TOKENS["alice"]!.token);
    const bob = (): ReturnType<typeof client> => client(server.url, TOKENS["bob"]!.token);
    const admin = (): ReturnType<typeof client> => client(server.url, TOKENS["admin"]!.token);

    async function start(): Promise<void> {
      server = await startTestServer(store.store, {
        auth: tokenAuth([...Object.values(TOKENS), SCRAPER]),
        metrics: { token: METRICS_TOKEN, pendingCacheMs: 0 },
        webhookDelivery: {
          pollMs: 50,
          batch: 100,
          concurrency: 4,
          timeoutMs: 1000,
          leaseMs: 3000,
          backoffMs: 50,
          maxBackoffMs: 100,
          maxAttempts: 2,
        },
      });
    }

    async function scrape(token = SCRAPER.token): Promise<Sample[]> {
      const response = await fetch(`${server.url}/metrics`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("text/plain");
      return parse(await response.text());
    }

    /** Starts a thread of `graph` and runs it to its question. */
    async function ask(
      as: ReturnType<typeof client>,
      graph: string,
      threadId: string,
      input: Json = {},
    ): Promise<void> {
      expect((await as("POST", "/threads", { graph, threadId })).status).toBe(201);
      const run = await as<Json>("POST", `/threads/${threadId}/runs`, { input, wait: true });
      expect(run.body["status"]).toBe("interrupted");
    }

    beforeEach(async () => {
      store = await backend.create();
      receiver = await TestReceiver.start();
      await start();
    });
    afterEach(async () => {
      await server.close();
      await receiver.close();
      await store.destroy();
    });

    it("reports exactly the pending approvals by tenant and graph; answers move the counters and the histogram", async () => {
      await ask(alice(), "ask", "a-1");
      await ask(alice(), "ask", "a-2");
      await ask(alice(), "ask", "a-3");
      await ask(alice(), "approve-then-charge", "a-charge", { ms: 0 });
      await ask(bob(), "ask", "g-1");
      await ask(bob(), "ask", "g-2");
      let samples = await scrape();
      expect(series(samples, "rein_approvals_pending")).toEqual({
        "tenant=acme,graph=ask": 3,
        "tenant=acme,graph=approve-then-charge": 1,
        "tenant=globex,graph=ask": 2,
      });
      const ages = series(samples, "rein_approvals_oldest_age_seconds");
      expect(Object.keys(ages).sort()).toEqual([
        "tenant=acme,graph=approve-then-charge",
        "tenant=acme,graph=ask",
        "tenant=globex,graph=ask",
      ]);
      for (const age of Object.values(ages)) expect(age).toBeGreaterThanOrEqual(0);
      for (const age of Object.values(ages)) expect(age).toBeLessThan(60);
      expect(series(samples, "rein_runs_started_total")).toEqual({ "kind=run": 6 });
      expect(series(samples, "rein_runs_finished_total")).toEqual({
        "kind=run,status=interrupted": 6,
      });
      expect(series(samples, "rein_approval_answers_total")).toEqual({});

      // A person answers one question with a value, another with an approval.
      const answered = await alice()<Json>("POST", "/threads/a-1/resume", {
        resume: { text: "yes" },
      });
      expect(answered.body["status"]).toBe("done");
      const approved = await alice()<Json>("POST", "/threads/a-charge/resume", {
        resume: { approved: true },
      });
      expect(approved.body["status"]).toBe("done");
      samples = await scrape();
      expect(series(samples, "rein_approvals_pending")).toEqual({
        "tenant=acme,graph=ask": 2,
        "tenant=globex,graph=ask": 2,
      });
      expect(series(samples, "rein_approval_answers_total")).toEqual({
        "graph=ask,decision=value,actor_type=human": 1,
        "graph=approve-then-charge,decision=approve,actor_type=human": 1,
      });
      expect(series(samples, "rein_approval_decision_seconds_count")).toEqual({
        "graph=ask,decision=value,actor_type=human": 1,
        "graph=approve-then-charge,decision=approve,actor_type=human": 1,
      });
      const seconds = series(samples, "rein_approval_decision_seconds_sum");
      expect(seconds["graph=ask,decision=value,actor_type=human"]).toBeGreaterThan(0);
      expect(seconds["graph=ask,decision=value,actor_type=human"]).toBeLessThan(60);
      expect(series(samples, "rein_runs_finished_total")).toEqual({
        "kind=run,status=interrupted": 6,
        "kind=resume,status=done": 2,
      });

      // A bulk decision answers both of globex's questions in one transaction.
      const bulk = await bob()<Json>("POST", "/interrupts/decisions", {
        ids: (await bob()<{ items: { id: string }[] }>("GET", "/interrupts")).body.items.map(
          (i) => i.id,
        ),
        resume: { text: "bulk" },
      });
      expect(bulk.body["count"]).toBe(2);
      samples = await scrape();
      expect(series(samples, "rein_approvals_pending")).toEqual({ "tenant=acme,graph=ask": 2 });
      expect(series(samples, "rein_approval_answers_total")).toMatchObject({
        "graph=ask,decision=value,actor_type=human": 3,
      });
      expect(series(samples, "rein_approval_decision_seconds_count")).toMatchObject({
        "graph=ask,decision=value,actor_type=human": 3,
      });
    });

    it("the deadline timer's resolutions count as timeout by the timer", async () => {
      await ask(alice(), "ask", "late", { timeoutMs: 200 });
      await expect
        .poll(async () => series(await scrape(), "rein_approval_answers_total"), {
          timeout: 5_000,
          interval: 100,
        })
        .toEqual({ "graph=ask,decision=timeout,actor_type=timer": 1 });
      const samples = await scrape();
      expect(series(samples, "rein_approvals_pending")).toEqual({});
      expect(series(samples, "rein_approval_decision_seconds_count")).toEqual({
        "graph=ask,decision=timeout,actor_type=timer": 1,
      });
      expect(
        series(samples, "rein_approval_decision_seconds_sum")[
          "graph=ask,decision=timeout,actor_type=timer"
        ],
      ).toBeGreaterThanOrEqual(0.2);
    });

    it("a question nobody answers counts its reminder and escalation once each, then its timeout", async () => {
      await server.close();
      server = await startTestServer(store.store, {
        graphs: { escalating },
        auth: tokenAuth([...Object.values(TOKENS), SCRAPER]),
        metrics: { token: METRICS_TOKEN, pendingCacheMs: 0 },
      });
      await ask(alice(), "escalating", "ladder", {
        remindMs: 200,
        escalateMs: 400,
        timeoutMs: 600,
      });
      await expect
        .poll(async () => series(await scrape(), "rein_approval_answers_total"), {
          timeout: 8_000,
          interval: 100,
        })
        .toEqual({ "graph=escalating,decision=timeout,actor_type=timer": 1 });
      expect(series(await scrape(), "rein_approval_escalations_total")).toEqual({
        "stage=remind,graph=escalating": 1,
        "stage=escalate,graph=escalating": 1,
      });
    });

    it("new input that cancels the pending questions counts them as cancel", async () => {
      await ask(alice(), "ask", "c-1");
      await ask(alice(), "ask", "c-2");
      const run = await alice()<Json>("POST", "/threads/c-1/runs", {
        input: { question: "Again?" },
        onPending: "cancel",
        wait: true,
      });
      expect(run.body["status"]).toBe("interrupted");
      const samples = await scrape();
      expect(series(samples, "rein_approval_answers_total")).toEqual({
        "graph=ask,decision=cancel,actor_type=human": 1,
      });
      // c-2's question and c-1's new one.
      expect(series(samples, "rein_approvals_pending")).toEqual({ "tenant=acme,graph=ask": 2 });
    });

    it("a webhook delivery to a failing receiver counts a retry, then a dead letter", async () => {
      receiver.answer = () => 500;
      const hook = await admin()<Json>("POST", "/webhooks", {
        url: receiver.url,
        events: ["interrupt.pending"],
      });
      expect(hook.status).toBe(201);
      await ask(alice(), "ask", "w-1");
      await receiver.waitFor(() => receiver.received.length === 2);
      await expect
        .poll(async () => series(await scrape(), "rein_webhook_deliveries_total"), {
          timeout: 5_000,
          interval: 100,
        })
        .toEqual({ "outcome=retry": 1, "outcome=dead": 1 });
      const samples = await scrape();
      expect(series(samples, "rein_webhook_attempt_duration_seconds_count")).toEqual({
        "outcome=retry": 1,
        "outcome=dead": 1,
      });
    });

    // Neither depends on the store: run once.
    const once = backend.name === "sqlite";

    it.runIf(once)(
      "scraping needs the metrics token or the metrics scope: 401/403 JSON otherwise",
      async () => {
        const get = (token: string | null) => client(server.url, token)<Json>("GET", "/metrics");
        const missing = await get(null);
        expect(missing.status).toBe(401);
        expect(missing.body["error"]).toBe("unauthorized");
        const wrong = await get("not-a-token-0123456789");
        expect(wrong.status).toBe(401);
        expect(wrong.body["error"]).toBe("unauthorized");
        // A tenant's token, even an admin's, sees one tenant: metrics count them all.
        for (const name of ["alice", "admin"]) {
          const refused = await get(TOKENS[name]!.token);
          expect(refused.status).toBe(403);
          expect(refused.body).toMatchObject({ error: "forbidden", details: { scope: "metrics" } });
        }
        expect((await scrape(METRICS_TOKEN)).length).toBeGreaterThan(0);
        expect((await scrape(SCRAPER.token)).length).toBeGreaterThan(0);
        // The OpenAPI document says so.
        const doc = await client(server.url, null)<{ paths: Record<string, { get: Json }> }>(
          "GET",
          "/openapi.json",
        );
        expect(doc.body.paths["/metrics"]!.get).toMatchObject({
          security: [{ bearer: ["metrics"] }],
          "x-rein-scope": "metrics",
        });
        // The scraper's token does nothing else.
        expect((await client(server.url, SCRAPER.token)("GET", "/interrupts")).status).toBe(403);
        // The refusals were counted, by route pattern.
        expect(series(await scrape(), "rein_http_requests_total")).toMatchObject({
          "method=GET,route=/metrics,status_class=4xx": 4,
          "method=GET,route=/interrupts,status_class=4xx": 1,
        });
      },
    );

    it.runIf(once)(
      "a thousand distinct thread URLs make one series per route pattern",
      async () => {
        const as = alice();
        for (let batch = 0; batch < 10; batch += 1)
          await Promise.all(
            Array.from({ length: 100 }, async (_, i) => {
              const n = batch * 100 + i;
              expect((await as("GET", `/threads/t-${n}`)).status).toBe(404);
              expect((await as("GET", `/no-such-route/${n}`)).status).toBe(404);
            }),
          );
        const requests = series(await scrape(), "rein_http_requests_total");
        expect(Object.keys(requests).filter((key) => /t-\d|no-such/.test(key))).toEqual([]);
        expect(requests["method=GET,route=/threads/:id,status_class=4xx"]).toBe(1000);
        expect(requests["method=GET,route=(unmatched),status_class=4xx"]).toBe(1000);
        const durations = series(await scrape(), "rein_http_request_duration_seconds_count");
        expect(durations["method=GET,route=/threads/:id,status_class=4xx"]).toBe(1000);
      },
    );
  });
}

suite(sqliteBackend);
suite(await postgresBackend());

describe("metrics through OpenTelemetry", () => {
  let store: TestStore;
  let server: TestServer;

  beforeAll(async () => {
    // Registered only now: the suites above ran without a provider (their values stay out).
    metrics.setGlobalMeterProvider(provider);
    store = await sqliteBackend.create();
    server = await startTestServer(store.store, { metrics: { pendingCacheMs: 0 } });
  });
  afterAll(async () => {
    await server.close();
    await store.destroy();
    metrics.disable();
    await provider.shutdown();
  });

  it("records the same instruments as rein.* through the registered MeterProvider", async () => {
    const alice = client(server.url, TOKENS["alice"]!.token);
    await alice("POST", "/threads", { graph: "ask", threadId: "o-1" });
    await alice("POST", "/threads/o-1/runs", { input: {}, wait: true });
    await alice("POST", "/threads", { graph: "ask", threadId: "o-2" });
    await alice("POST", "/threads/o-2/runs", { input: {}, wait: true });
    const pending = await otelPoints("rein.approvals.pending");
    expect(pending.map((p) => [p.attributes, p.value])).toEqual([
      [{ tenant: "acme", graph: "ask" }, 2],
    ]);
    const age = await otelPoints("rein.approvals.oldest_age");
    expect(age.map((p) => p.attributes)).toEqual([{ tenant: "acme", graph: "ask" }]);
    await alice("POST", "/threads/o-1/resume", { resume: { text: "ok" } });
    await server.server.context.metrics!.render();
    const answers = await otelPoints("rein.approvals.answers");
    expect(answers.map((p) => [p.attributes, p.value])).toEqual([
      [{ graph: "ask", decision: "value", actor_type: "human" }, 1],
    ]);
    const durations = await otelPoints("rein.approvals.decision.duration");
    expect(durations.map((p) => [p.attributes, (p.value as Histogram).count])).toEqual([
      [{ graph: "ask", decision: "value", actor_type: "human" }, 1],
    ]);
    expect((await otelPoints("rein.approvals.pending")).map((p) => p.value)).toEqual([1]);
    const runs = await otelPoints("rein.runs.finished");
    expect(runs.map((p) => [p.attributes, p.value])).toEqual(
      expect.arrayContaining([
        [{ kind: "run", status: "interrupted" }, 2],
        [{ kind: "resume", status: "done" }, 1],
      ]),
    );
    const requests = await otelPoints("rein.http.requests");
    expect(requests.map((p) => [p.attributes, p.value])).toContainEqual([
      { method: "POST", route: "/threads/:id/resume", status_class: "2xx" },
      1,
    ]);
  });

  it("countEscalation counts in every live server, and once in OpenTelemetry", async () => {
    const other = await startTestServer(store.store, { auth: openAuth() });
    try {
      countEscalation("remind", "ask");
      countEscalation("escalate", "ask");
      countEscalation("escalate", "ask");
      for (const running of [server, other]) {
        const text = await running.server.context.metrics!.render();
        expect(series(parse(text), "rein_approval_escalations_total")).toEqual({
          "stage=remind,graph=ask": 1,
          "stage=escalate,graph=ask": 2,
        });
      }
      const points = await otelPoints("rein.approvals.escalations");
      expect(points.map((p) => [p.attributes, p.value])).toEqual([
        [{ stage: "remind", graph: "ask" }, 1],
        [{ stage: "escalate", graph: "ask" }, 2],
      ]);
    } finally {
      await other.close();
    }
    // A closed server counts no more.
    countEscalation("remind", "ask");
    const text = await server.server.context.metrics!.render();
    expect(series(parse(text), "rein_approval_escalations_total")["stage=remind,graph=ask"]).toBe(
      2,
    );
  });

  it("is open in open mode, and off with metrics: false", async () => {
    const open = await startTestServer(store.store, { auth: openAuth() });
    const off = await startTestServer(store.store, { auth: openAuth(), metrics: false });
    try {
      const scraped = await fetch(`${open.url}/metrics`);
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain("# TYPE rein_approvals_pending gauge");
      const absent = await client(off.url, null)<Json>("GET", "/metrics");
      expect(absent.status).toBe(404);
      expect(absent.body["error"]).toBe("not_found");
    } finally {
      await open.close();
      await off.close();
    }
  });
});
