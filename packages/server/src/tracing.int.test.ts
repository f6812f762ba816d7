/**
 * Request spans: every route runs inside an OpenTelemetry server span, the runs it starts are
 * its children, and a caller's `traceparent` makes the request a child of the caller's trace.
 */
import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  TOKENS,
  client,
  sqliteBackend,
  startTestServer,
  type TestServer,
  type TestStore,
} from "./testing/harness.ts";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let store: TestStore;
let server: TestServer;

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  store = await sqliteBackend.create();
  server = await startTestServer(store.store);
});
afterAll(async () => {
  await server.close();
  await store.destroy();
  trace.disable();
  context.disable();
  propagation.disable();
  await provider.shutdown();
});

const spans = (name: string): ReadableSpan[] =>
  exporter.getFinishedSpans().filter((s) => s.name === name);

describe("request spans", () => {
  it("wraps a request in a server span whose children are the spans of the run it started", async () => {
    const alice = client(server.url, TOKENS["alice"]!.token);
    expect((await alice("POST", "/threads", { graph: "desk", threadId: "t-otel" })).status).toBe(
      201,
    );
    exporter.reset();
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const run = await alice(
      "POST",
      "/threads/t-otel/runs",
      { input: {}, wait: true },
      { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    );
    expect(run.status).toBe(200);
    const [request] = spans("HTTP POST /threads/:id/runs");
    expect(request?.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/threads/:id/runs",
      "http.response.status_code": 200,
      "rein.thread_id": "t-otel",
    });
    // The caller's trace continues through the request into the run.
    expect(request?.spanContext().traceId).toBe(traceId);
    const [rootRun] = spans("rein.run").filter(
      (s) => s.attributes["rein.parent_run_id"] === undefined,
    );
    expect(rootRun?.parentSpanContext?.spanId).toBe(request?.spanContext().spanId);
    expect(rootRun?.spanContext().traceId).toBe(traceId);
  });

  it("records a refusal's code on the request span without marking the server failed", async () => {
    exporter.reset();
    const anonymous = client(server.url, null);
    expect((await anonymous("GET", "/threads/t-otel")).status).toBe(401);
    const [request] = spans("HTTP GET /threads/:id");
    expect(request?.attributes["rein.error"]).toBe("unauthorized");
    expect(request?.status.code).not.toBe(2);
  });
});
