/**
 * `rein serve`: opens the store, loads the graphs, picks auth (tokens, OpenID issuers, or `--open` on loopback
 * only), listens, and shuts down gracefully on SIGINT/SIGTERM.
 */
import { loadPolicies } from "../policies.ts";
import { createServer } from "../app.ts";
import { installedConsoleDir, missingConsoleHint } from "../console.ts";
import { loadTokens, openAuth, tokenAuth, type AuthConfig } from "../auth.ts";
import { issuersFromFlags, loadIdentity, type OidcFlags } from "../identity/config.ts";
import { graphModuleClose, loadGraphModule } from "../registry.ts";
import { startScaleOut } from "../scale/index.ts";
import { openStore, type StoreOptions } from "../store.ts";
import { deliverySettingsFromEnv } from "../webhooks/delivery.ts";
import { webhookBackendOf } from "../webhooks/store.ts";
import { loadNotifyConfig } from "../notify/config.ts";
import { notifySetup } from "../notify/setup.ts";
import { closeGraphModule, stderrLog, untilStopped } from "./lifetime.ts";
import { ExitCode, type Io } from "./output.ts";

/** Options of `rein serve`. */
export interface ServeOptions {
  db?: string | undefined;
  postgres?: string | undefined;
  graphs?: string | undefined;
  port: number;
  host?: string | undefined;
  tokens?: string | undefined;
  /** A JSON file of OpenID issuers (`--identity FILE`; see docs/identity.md). */
  identity?: string | undefined;
  /** One OpenID issuer from the `--oidc-*` flags. */
  oidc?: OidcFlags | undefined;
  /** A JSON file of default approval policies per graph (see docs/governance.md). */
  policies?: string | undefined;
  /** A JSON notifier config (`--notify FILE` or `REIN_NOTIFY_FILE`; see docs/notifications.md). */
  notify?: string | undefined;
  open: boolean;
  cors?: string[] | undefined;
  /** Leave LangGraph's protocol (`/langgraph`) off (`--no-langgraph`). */
  noLangGraph?: boolean | undefined;
  /** Log level of the JSON request log on stdout; `silent` turns it off. */
  logLevel: string;
  /** Postgres schema of the store. */
  schema?: string | undefined;
  /** A direct Postgres URL for LISTEN when `--postgres` goes through PgBouncer (`--listen-url`). */
  listenUrl?: string | undefined;
  /** Background runs this process executes at once (on Postgres 0: only accept them). */
  concurrency: number;
  /** HMAC key of the audit chains' signed heads (`--audit-key` or `REIN_AUDIT_KEY`). */
  auditKey?: string | undefined;
  /** A bearer token that may scrape `/metrics` (`--metrics-token` or `REIN_METRICS_TOKEN`). */
  metricsToken?: string | undefined;
  /** Also export the default process metrics (`--metrics-process`). */
  metricsProcess?: boolean | undefined;
  /** No `/metrics` and no OpenTelemetry instruments (`--no-metrics`). */
  noMetrics?: boolean | undefined;
}

/**
 * The one lease setting of a deployment (`REIN_LEASE_TTL_MS`, default 30 s): every served
 * graph's thread leases last this long, and the background sweep that takes over the runs of a
 * dead process runs four times per TTL.
 */
export function leaseTtlMs(): number {
  const value = Number(process.env["REIN_LEASE_TTL_MS"]);
  return Number.isFinite(value) && value > 0 ? value : 30_000;
}

/**
 * How long shutdown lets running steps finish (`REIN_DRAIN_MS`, default 30 s) before handing the
 * runs still going over to the other processes (a rolling deploy's grace period should exceed it).
 */
export function drainMs(): number {
  const raw = process.env["REIN_DRAIN_MS"];
  const value = raw === undefined || raw.trim() === "" ? Number.NaN : Number(raw);
  return Number.isFinite(value) && value >= 0 ? value : 30_000;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/** Said at start by a process that has no LISTEN connection. */
export const NO_LISTEN =
  "no LISTEN connection: the Postgres URL goes through a transaction-mode pooler (pgbouncer=true) or names several hosts, and no --listen-url (REIN_LISTEN_URL) names a direct one; other processes' queued runs are found by the sweep (four times per lease), and joins of runs executing elsewhere get their events at the run's end.";

/** Thrown for a wrong command line; main prints it and exits with {@link ExitCode.USAGE}. */
export class UsageError extends Error {}

/** Where the store is, from the flags (`--postgres`, `--db`, or `REIN_POSTGRES_URL` / `.rein/rein.db`). */
export function storeOptions(options: {
  db?: string | undefined;
  postgres?: string | undefined;
  schema?: string | undefined;
  listenUrl?: string | undefined;
}): StoreOptions {
  if (options.db && options.postgres) throw new UsageError("Pass --db or --postgres, not both.");
  const postgres = options.postgres ?? (options.db ? undefined : process.env["REIN_POSTGRES_URL"]);
  return postgres
    ? { postgres, schema: options.schema, listenUrl: options.listenUrl }
    : { db: options.db ?? ".rein/rein.db" };
}

function authFrom(options: ServeOptions, io: Io): { auth: AuthConfig; host: string } {
  const tokens = loadTokens({ ...(options.tokens ? { file: options.tokens } : {}) });
  const flagged = options.oidc ? issuersFromFlags(options.oidc) : [];
  if (flagged.length > 0 && options.identity)
    throw new UsageError("Pass --oidc-issuer or --identity FILE, not both.");
  const issuers = options.identity ? loadIdentity(options.identity) : flagged;
  if ((tokens || issuers.length > 0) && options.open)
    throw new UsageError(
      "Pass --open or credentials (--tokens / REIN_TOKENS, --oidc-issuer, --identity), not both.",
    );
  if (tokens || issuers.length > 0)
    return { auth: tokenAuth(tokens ?? [], issuers), host: options.host ?? "127.0.0.1" };
  if (!options.open)
    throw new UsageError(
      "No tokens: pass --tokens FILE or set REIN_TOKENS, --oidc-issuer URL --oidc-audience AUD (or --identity FILE), or --open for local use without auth (loopback only).",
    );
  const host = options.host ?? "127.0.0.1";
  if (!LOOPBACK.has(host))
    throw new UsageError(`--open binds to loopback only; ${host} is not loopback.`);
  io.err(
    'WARNING: open mode: no authentication; every request acts as "local" with every scope. Bound to loopback only.\n',
  );
  return { auth: openAuth(), host };
}

/**
 * Runs the server until a signal. Resolves with the exit code.
 */
export async function serve(options: ServeOptions, io: Io, stop?: AbortSignal): Promise<number> {
  const graphsModule = options.graphs ?? process.env["REIN_GRAPHS"];
  if (!graphsModule)
    throw new UsageError("Pass --graphs MODULE (a module exporting `graphs`) or set REIN_GRAPHS.");
  const { auth, host } = authFrom(options, io);
  const graphs = await loadGraphModule(graphsModule);
  const notifyConfig = loadNotifyConfig({ file: options.notify });
  const log = stderrLog(io);
  const opened = await openStore(storeOptions(options), log);
  const notify = notifyConfig ? notifySetup(notifyConfig, opened.store) : null;
  const webhookStore = webhookBackendOf(opened.store)?.webhooks;
  if (notify && webhookStore)
    for (const line of await notify.subscribe(webhookStore))
      io.err(`rein serve: notifier subscription ${line}\n`);
  const consoleDir = installedConsoleDir();
  const scale = opened.postgres
    ? await startScaleOut({
        store: opened.postgres.saver,
        connectionString: opened.postgres.listenUrl,
        log,
      })
    : null;
  if (opened.postgres?.listenUrl === null) io.err(`rein serve: ${NO_LISTEN}\n`);
  const server = await createServer({
    ...(scale ? { scale } : {}),
    store: opened.store,
    storeKind: opened.kind,
    schema: opened.schema,
    graphs,
    auth,
    ...(options.policies ? { policies: loadPolicies(options.policies) } : {}),
    leaseTtlMs: leaseTtlMs(),
    drainMs: drainMs(),
    webhookDelivery: deliverySettingsFromEnv(),
    ...(notify ? { notifiers: notify.notifiers, links: notify.links } : {}),
    ...(notify?.slack ? { slack: notify.slack } : {}),
    concurrency: opened.postgres ? options.concurrency : Math.max(1, options.concurrency),
    ...(options.cors ? { corsOrigins: options.cors } : {}),
    ...(options.noLangGraph ? { langgraph: false } : {}),
    ...(consoleDir ? { consoleDir } : {}),
    ...(options.auditKey ? { auditKey: options.auditKey } : {}),
    metrics: options.noMetrics
      ? false
      : { token: options.metricsToken, processMetrics: options.metricsProcess ?? false },
    logger:
      options.logLevel === "silent"
        ? false
        : { level: options.logLevel, redact: ["req.headers.authorization", "req.headers.cookie"] },
  });
  const url = await server.listen({ port: options.port, host });
  io.err(
    `rein serve: ${opened.kind} store at ${opened.where}; graphs: ${Object.keys(graphs).join(", ")}\n`,
  );
  // Listen for SIGINT/SIGTERM before saying "listening": whoever reads that line may signal at
  // once, and a signal that comes before a handler exists kills the process without a shutdown.
  const stopped = untilStopped(stop);
  io.out(`listening on ${url}\n`);
  io.err(
    server.app.hasRoute({ method: "GET", url: "/" })
      ? `rein serve: approval console at ${url}/\n`
      : `rein serve: no approval console: ${missingConsoleHint(consoleDir)}\n`,
  );
  const why = await stopped;
  io.err(`rein serve: ${why}: shutting down, draining running work...\n`);
  await server.close();
  notify?.close();
  await closeGraphModule(await graphModuleClose(graphsModule), "rein serve", io);
  await scale?.stop();
  await opened.store.close();
  io.err("rein serve: stopped\n");
  return ExitCode.OK;
}
