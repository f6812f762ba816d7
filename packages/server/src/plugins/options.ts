/**
 * The options of `createServer`: what each feature plugin is configured with.
 */
import type { ApproversSpec, RuntimeStore } from "@rein/core";
import type { FastifyServerOptions } from "fastify";
import type { AuthConfig } from "../auth.ts";
import type { LinkSettings } from "../notify/config.ts";
import type { SlackOptions } from "../notify/slack-config.ts";
import type { Notifier } from "../webhooks/notifier.ts";
import type { SchemaStatus } from "../readiness.ts";
import type { GraphFactory } from "../registry.ts";
import type { ScaleOut } from "../scale/index.ts";
import type { WebhookDeliverySettings } from "../webhooks/delivery.ts";

/** Options of {@link createServer}. */
export interface ServerOptions {
  /**
   * The store. Besides the runtime store it must declare the capabilities of the features turned
   * on (see `featureNeeds`): a store that lacks one is refused at start with one line.
   */
  store: RuntimeStore;
  /** Reported by `/healthz`. Default `"custom"`. */
  storeKind?: string;
  /**
   * How `/readyz` reads the store's schema version against the one this build needs (its
   * `migrations` check; `openStore` gives it for SQLite and Postgres). Default: none, and
   * readiness only makes a round trip to the store.
   */
  schema?: SchemaStatus;
  /** Graphs by name (what a `--graphs` module exports). */
  graphs: Record<string, GraphFactory>;
  /** Tokens and OpenID issuers (`tokenAuth`), or open mode. API keys come from the store. */
  auth: AuthConfig;
  /**
   * Default approvers per graph name (`--policies FILE`): who may answer the questions a graph
   * raises without approvers of their own. See docs/governance.md.
   */
  policies?: Record<string, ApproversSpec>;
  /** Largest accepted request body in bytes. Default 1 MiB. */
  bodyLimit?: number;
  /** Origins allowed to call from a browser. Default none: CORS closed. */
  corsOrigins?: string[];
  /** Fastify's pino logger options, or false. Default false. */
  logger?: FastifyServerOptions["logger"];
  /** SSE keep-alive interval. Default 15 s. */
  pingMs?: number;
  /** How often the interrupt feed re-reads the queue. Default 2 s. */
  queuePollMs?: number;
  /** How long shutdown waits for running work before aborting it. Default 30 s. */
  drainMs?: number;
  /** Run the graphs' deadline timers in this process. Default true. */
  deadlines?: boolean;
  /**
   * Continue the runs a crashed process left running (a sweep at start and every quarter of the
   * lease TTL, on every server and worker). Default true.
   */
  recover?: boolean;
  /**
   * Lease TTL of every graph served, in ms (`REIN_LEASE_TTL_MS` in the CLI): how long a dead
   * process holds a thread before another takes its run over. Default: each graph's own (30 s
   * unless compiled otherwise).
   */
  leaseTtlMs?: number;
  /**
   * Background runs this process executes at once. Default 4. With 0 (Postgres only) it accepts runs and other processes execute them.
   */
  concurrency?: number;
  /**
   * Directory of the built approval console (`@rein/console`'s `consoleDir`), served at `/`.
   * Default: no console. Ignored when the directory holds no `index.html`.
   */
  consoleDir?: string;
  /**
   * The HMAC key of the audit log's signed heads (`REIN_AUDIT_KEY` or `--audit-key` in the CLI).
   * Given, `GET /audit/verify` checks each chain against its signed head (finding a deleted tail)
   * and signs the heads it verified. Default: none. See docs/audit.md.
   */
  auditKey?: string;
  /**
   * Scale-out on Postgres (see `startScaleOut`): run events, queue wake-ups and cancel requests
   * travel between the processes over LISTEN/NOTIFY.
   */
  scale?: ScaleOut;
  /**
   * The webhook delivery loop's pacing (`REIN_WEBHOOK_*` in the CLI), or `false` to leave
   * delivery to other processes. Default: on, with `DEFAULT_DELIVERY`. The `/webhooks`
   * routes exist on every store Rein ships.
   */
  webhookDelivery?: WebhookDeliverySettings | false;
  /**
   * Slack (the `slack` section of `--notify FILE`): given, `POST /slack/interactivity` takes
   * Approve / Reject clicks, signed by Slack, as the mapped people. See docs/slack.md.
   */
  slack?: SlackOptions;
  /**
   * Notifiers (email, Slack) this process's delivery loop hands `notify:<kind>` subscriptions'
   * events to (`--notify FILE` in the CLI). See docs/notifications.md.
   */
  notifiers?: Notifier[];
  /**
   * How decision links are signed and where they point. Given, `/links/<token>` serves them and
   * `POST /interrupts/:id/links` mints them; without, minting answers `links_not_configured`.
   */
  links?: LinkSettings | null;
  /**
   * Metrics: `GET /metrics` (Prometheus text) and the OpenTelemetry instruments of
   * `metrics.getMeter("rein")`, or `false` for neither. Default: on, with no extra token. See
   * docs/metrics.md.
   */
  metrics?: MetricsOptions | false;
  /**
   * LangGraph's Agent Server protocol under `/langgraph` (clients take `<server>/langgraph` as
   * their `apiUrl`; see docs/langgraph-protocol.md), or `false` to leave it off. Default: on.
   */
  langgraph?: boolean;
}

/** Options of a server's metrics (see docs/metrics.md). */
export interface MetricsOptions {
  /**
   * A bearer token that may scrape `/metrics` (`--metrics-token`), beside tokens with the
   * `metrics` scope. Ignored in open mode, where `/metrics` is open.
   */
  token?: string | undefined;
  /** Also export prom-client's default process metrics (`--metrics-process`). Default false. */
  processMetrics?: boolean | undefined;
  /** How long one store read of the pending approvals serves scrapes, ms. Default 2000. */
  pendingCacheMs?: number | undefined;
}
