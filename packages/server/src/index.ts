/**
 * `@rein/server` — Rein's control surface: the HTTP API over a store and a set of graphs, with
 * bearer-token auth and tenants, background runs and SSE streams; and the `rein` CLI.
 *
 * @packageDocumentation
 */
export { createServer } from "./app.ts";
export type { MetricsOptions, ReinServer, ServerOptions } from "./app.ts";
export { ReinMetrics, countEscalation } from "./metrics/recorder.ts";
export type { ReinMetricsOptions, ResolvedInterrupt } from "./metrics/recorder.ts";
export { Metrics } from "./metrics/names.ts";
export type { ActorType, Decision, EscalationStage, MetricSpec } from "./metrics/names.ts";
export { authenticate, loadTokens, openAuth, parseTokens, tokenAuth } from "./auth.ts";
export type { AuthConfig, Principal, Scope, TokenConfig } from "./auth.ts";
export { ForbiddenError, PayloadTooLargeError, UnauthorizedError, statusByCode } from "./errors.ts";
export type { ErrorBody } from "./errors.ts";
export { buildOpenApi } from "./openapi.ts";
export { registerConsole } from "./console.ts";
export { GraphRegistry, loadGraphModule } from "./registry.ts";
export type { GraphFactory, GraphModule, ServedGraph } from "./registry.ts";
export { openStore } from "./store.ts";
export type { OpenedStore, StoreOptions } from "./store.ts";
