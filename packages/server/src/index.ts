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
export { issuersFromFlags, loadIdentity, parseIdentity } from "./identity/config.ts";
export type { OidcFlags } from "./identity/config.ts";
export type { OidcIssuerConfig } from "./identity/oidc.ts";
export type { ClaimMapping, ClaimPath } from "./identity/claims.ts";
export { ForbiddenError, PayloadTooLargeError, UnauthorizedError, statusByCode } from "./errors.ts";
export type { ErrorBody } from "./errors.ts";
export { buildOpenApi } from "./openapi.ts";
export { registerConsole } from "./console.ts";
export { GraphRegistry, loadGraphModule } from "./registry.ts";
export type { GraphFactory, GraphModule, ServedGraph } from "./registry.ts";
export { openStore } from "./store.ts";
export type { OpenedStore, StoreOptions } from "./store.ts";
export { createSlackNotifier } from "./notify/slack.ts";
export type { SlackNotifierOptions } from "./notify/slack.ts";
export type { Notifier, NotifierDelivery } from "./notify/notifier.ts";
export { SlackConfigSchema, parseSlackConfig } from "./notify/slack-config.ts";
export type { SlackOptions, SlackPerson } from "./notify/slack-config.ts";
export { LinksNotConfiguredError } from "./errors.ts";
export { linkSettings, loadNotifyConfig, parseNotifyConfig } from "./notify/config.ts";
export type { LinkSettings, NotifyConfig, Person } from "./notify/config.ts";
export { notifySetup } from "./notify/setup.ts";
export type { NotifySetup } from "./notify/setup.ts";
export { ensureNotifySubscription } from "./notify/subscriptions.ts";
export type {
  InterruptEventData,
  RunEventData,
  WebhookApprovers,
  WebhookBody,
} from "./webhooks/payload.ts";
