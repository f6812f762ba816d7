/**
 * What every route handler shares: the store, the graphs, auth, the run manager, settings.
 */
import type { Checkpointer } from "@rein/core";
import type { Readiness } from "@rein/wire";
import type { AuthConfig, Principal } from "./auth.ts";
import type { BackgroundRuns } from "./background.ts";
import type { ReinMetrics } from "./metrics/recorder.ts";
import type { GraphRegistry } from "./registry.ts";
import type { RouteSpec } from "./route-spec.ts";
import type { RunManager } from "./run-manager.ts";
import type { ScaleOut } from "./scale/index.ts";
import type { SseStream } from "./sse.ts";

/** Shared state of one server. */
export interface ServerContext {
  store: Checkpointer;
  /** `sqlite`, `postgres` or `memory`, reported by `/healthz`. */
  storeKind: string;
  registry: GraphRegistry;
  auth: AuthConfig;
  /**
   * The principal of an `Authorization` header: {@link AuthConfig}'s credentials and the store's
   * API keys. @throws UnauthorizedError or CredentialError (401).
   */
  authenticate: (header: string | undefined) => Promise<Principal>;
  runs: RunManager;
  /** Background runs: the queue of accepted runs and the sweep that keeps it moving. */
  background: BackgroundRuns;
  /** Routes as declared, in order, for the OpenAPI document. */
  routes: RouteSpec[];
  /** Keep-alive comment interval of SSE streams. */
  pingMs: number;
  /** How often the interrupt feed re-reads the queue (changes made by other processes). */
  queuePollMs: number;
  /** Open SSE streams, closed at shutdown once running work has drained. */
  streams: Set<SseStream>;
  /** On Postgres: the fan-out of events and notices shared with other processes. */
  scale: ScaleOut | null;
  /** The HMAC key of the audit chains' signed heads, or null (no signed heads). */
  auditKey: string | null;
  /** This server's metrics (`GET /metrics`), or null when metrics are off. */
  metrics: ReinMetrics | null;
  /** Whether this server should take traffic now (`GET /readyz`). */
  ready: () => Promise<Readiness>;
}
