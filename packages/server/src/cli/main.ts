/**
 * `rein`: the command line of Rein. `serve` and `worker` run processes; the other commands talk
 * to a server (`--url`, default `$REIN_URL` or http://127.0.0.1:8080; `--token` or `$REIN_TOKEN`).
 */
import { parseArgs } from "node:util";
import { NotAllowedApiError, ReinApiError } from "@rein/client";
import { ReinError } from "@rein/core";
import {
  historyCommand,
  interruptsCommand,
  resumeCommand,
  runsCommand,
  startCommand,
  stateCommand,
  steerCommand,
  threadsCommand,
  type ClientFlags,
} from "./commands.ts";
import { bulkRefusalLines, decideCommand } from "./decide.ts";
import { statusByCode, type ErrorBody } from "../errors.ts";
import { ExitCode, exitCodeOf, processIo, type Io } from "./output.ts";
import { UsageError, serve } from "./serve.ts";
import { webhooksCommand } from "./webhooks.ts";
import { keysCommand } from "./keys.ts";
import { worker } from "./worker.ts";
import { auditExportCommand, auditVerifyCommand, type AuditFlags } from "./audit.ts";

/** `rein audit verify|export`. */
function auditCommand(
  io: Io,
  flags: ClientFlags,
  sub: string | undefined,
  audit: AuditFlags,
): Promise<number> {
  if (sub === "verify") return auditVerifyCommand(io, flags, audit);
  if (sub === "export") return auditExportCommand(io, flags, audit);
  throw new UsageError(`Use rein audit verify or rein audit export (got ${JSON.stringify(sub)}).`);
}

const HELP = `rein — serve and steer durable agent runs

Processes:
  rein serve  [--db FILE | --postgres URL [--schema S] [--concurrency 2]] --graphs MODULE
              [--port 8080] [--host 127.0.0.1] [--tokens FILE | --open] [--cors-origin ORIGIN]...
              [--oidc-issuer URL --oidc-audience AUD [--oidc-client-id ID] [--oidc-tenant T |
              --oidc-tenant-claim PATH] [--oidc-groups-claim PATH] [--oidc-roles-claim PATH]
              [--oidc-scope S]... | --identity FILE]   JWTs of OpenID issuers (docs/identity.md)
              [--log-level info|silent] [--policies FILE] [--notify FILE]
              [--metrics-token TOKEN] [--metrics-process] [--no-metrics] [--no-langgraph]
  rein worker --postgres URL [--schema S] [--concurrency 4] --graphs MODULE [--policies FILE]
              [--notify FILE] [--metrics-port PORT [--metrics-host 127.0.0.1]
              [--metrics-token TOKEN] [--metrics-process]]
              runs queued background runs, takes over runs of dead processes, fires deadlines
  Both, on Postgres: --listen-url URL (or $REIN_LISTEN_URL) is a direct connection for LISTEN
              when --postgres goes through PgBouncer in transaction mode (?pgbouncer=true)

Talking to a server (--url URL, --token TOKEN, --json: results and errors as JSON):
  rein threads                                      threads of your tenant
  rein start GRAPH [--thread ID] [--input JSON]     new thread, first run (waits)
  rein interrupts [--graph G] [--thread T] [--status S] [--limit N] [--cursor C]
  rein resume THREAD (--value JSON | --map JSON) [--interrupt ID | --run RUN --namespace a/b]
              [--steering TEXT] [--expect CHECKPOINT] [--key IDEMPOTENCY_KEY] [--cancel-children]
  rein steer THREAD TEXT [--interrupt ID | --run RUN --namespace a/b]
  rein decide (--ids ID,ID,... | [--graph G] [--sub-agent S] [--thread T] --expect N)
              (--accept | --reject | --value JSON) [--steering TEXT] [--key IDEMPOTENCY_KEY]
              one decision for many interrupts, all or nothing
  rein state THREAD [--subgraphs]
  rein history THREAD [--limit N]
  rein runs THREAD [RUN]
  rein audit verify [--thread T] [--tenant T]      re-compute the audit hash chains; name the
                                                    first broken link
  rein audit export [--thread T] [--tenant T]      the audit log with its hashes, JSON Lines
              (either on a store instead of a server: --db FILE | --postgres URL [--schema S]
              [--audit-key KEY or $REIN_AUDIT_KEY: check and sign the chains' heads])
  rein webhooks add URL --events a,b [--graph G1,G2]   subscribe (admin); prints the secret once
  rein webhooks list | remove ID | rotate ID [--grace SECONDS] | deliveries ID [--limit N]
  rein keys create --name NAME --scopes read,resume [--expires 30d|ISO]   an API key for a
              machine (admin); prints the key once
  rein keys list | revoke ID                        your tenant's keys; revoke is at once

--notify FILE (or $REIN_NOTIFY_FILE) configures notifiers (email) and signed decision links;
the link key comes from $REIN_LINK_SECRET or the file (docs/notifications.md).
GET /metrics (Prometheus text) is open in --open mode; with tokens it takes the --metrics-token
(or $REIN_METRICS_TOKEN) or a token with the "metrics" scope. See docs/metrics.md.

Serving with --audit-key KEY (or $REIN_AUDIT_KEY) signs the audit chains' heads at each verify,
so a deleted tail is found too.

Exit codes: 0 done; 1 server failure or unreachable; 2 usage; 3 refused (4xx, e.g. 403
not_allowed by an approval policy); 4 conflict (409: stale target, busy thread, or a bulk decision
refused or whose count changed: re-read and decide again); 5 the audit log does not verify.
`;

const OPTIONS = {
  db: { type: "string" },
  postgres: { type: "string" },
  graphs: { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  tokens: { type: "string" },
  policies: { type: "string" },
  notify: { type: "string" },
  open: { type: "boolean", default: false },
  cors: { type: "string", multiple: true },
  "cors-origin": { type: "string", multiple: true },
  "no-langgraph": { type: "boolean", default: false },
  "log-level": { type: "string" },
  url: { type: "string" },
  token: { type: "string" },
  json: { type: "boolean", default: false },
  thread: { type: "string" },
  input: { type: "string" },
  graph: { type: "string" },
  status: { type: "string" },
  limit: { type: "string" },
  cursor: { type: "string" },
  interrupt: { type: "string" },
  run: { type: "string" },
  namespace: { type: "string" },
  value: { type: "string" },
  map: { type: "string" },
  steering: { type: "string" },
  expect: { type: "string" },
  key: { type: "string" },
  "cancel-children": { type: "boolean", default: false },
  ids: { type: "string" },
  "sub-agent": { type: "string" },
  accept: { type: "boolean", default: false },
  reject: { type: "boolean", default: false },
  subgraphs: { type: "boolean", default: false },
  concurrency: { type: "string" },
  schema: { type: "string" },
  "listen-url": { type: "string" },
  tenant: { type: "string" },
  "audit-key": { type: "string" },
  "metrics-token": { type: "string" },
  "metrics-port": { type: "string" },
  "metrics-host": { type: "string" },
  "metrics-process": { type: "boolean", default: false },
  "no-metrics": { type: "boolean", default: false },
  events: { type: "string" },
  grace: { type: "string" },
  identity: { type: "string" },
  name: { type: "string" },
  scopes: { type: "string" },
  expires: { type: "string" },
  "oidc-issuer": { type: "string", multiple: true },
  "oidc-audience": { type: "string", multiple: true },
  "oidc-client-id": { type: "string" },
  "oidc-tenant": { type: "string" },
  "oidc-tenant-claim": { type: "string" },
  "oidc-groups-claim": { type: "string" },
  "oidc-roles-claim": { type: "string" },
  "oidc-scope": { type: "string", multiple: true },
  help: { type: "boolean", short: "h", default: false },
} as const;

function int(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${flag} must be a whole number.`);
  return n;
}

function need(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`Missing ${what}. See rein --help.`);
  return value;
}

/** Runs the CLI with `argv` (without `node` and the script). Resolves with the exit code. */
export async function main(
  argv: string[],
  io: Io = processIo,
  stop?: AbortSignal,
): Promise<number> {
  try {
    const { values: v, positionals } = parseArgs({
      args: argv,
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
    });
    const [command, ...args] = positionals;
    if (v.help || !command) {
      io.out(HELP);
      return command || v.help ? ExitCode.OK : ExitCode.USAGE;
    }
    const flags: ClientFlags = {
      url: v.url ?? process.env["REIN_URL"] ?? "http://127.0.0.1:8080",
      token: v.token ?? process.env["REIN_TOKEN"],
      json: v.json,
    };
    switch (command) {
      case "serve":
        return await serve(
          {
            db: v.db,
            postgres: v.postgres,
            graphs: v.graphs,
            port: int("port", v.port) ?? 8080,
            host: v.host,
            tokens: v.tokens,
            identity: v.identity,
            oidc: {
              issuers: v["oidc-issuer"] ?? [],
              audiences: v["oidc-audience"] ?? [],
              clientId: v["oidc-client-id"],
              tenant: v["oidc-tenant"],
              tenantClaim: v["oidc-tenant-claim"],
              groupsClaim: v["oidc-groups-claim"],
              rolesClaim: v["oidc-roles-claim"],
              consoleScopes: v["oidc-scope"],
            },
            policies: v.policies,
            notify: v.notify,
            open: v.open,
            cors: [...(v.cors ?? []), ...(v["cors-origin"] ?? [])],
            noLangGraph: v["no-langgraph"],
            logLevel: v["log-level"] ?? "info",
            schema: v.schema,
            listenUrl: v["listen-url"],
            concurrency: int("concurrency", v.concurrency) ?? 2,
            auditKey: v["audit-key"] ?? process.env["REIN_AUDIT_KEY"],
            metricsToken: v["metrics-token"] ?? (process.env["REIN_METRICS_TOKEN"] || undefined),
            metricsProcess: v["metrics-process"],
            noMetrics: v["no-metrics"],
          },
          io,
          stop,
        );
      case "worker":
        return await worker(
          {
            postgres: v.postgres,
            schema: v.schema,
            listenUrl: v["listen-url"],
            graphs: v.graphs,
            policies: v.policies,
            notify: v.notify,
            concurrency: int("concurrency", v.concurrency) ?? 4,
            metricsPort: int("metrics-port", v["metrics-port"]),
            metricsHost: v["metrics-host"],
            metricsToken: v["metrics-token"] ?? (process.env["REIN_METRICS_TOKEN"] || undefined),
            metricsProcess: v["metrics-process"],
          },
          io,
          stop,
        );
      case "threads":
        await threadsCommand(io, flags, int("limit", v.limit));
        return ExitCode.OK;
      case "start":
        await startCommand(io, flags, need(args[0], "GRAPH"), { thread: v.thread, input: v.input });
        return ExitCode.OK;
      case "interrupts":
        await interruptsCommand(io, flags, {
          ...(v.graph ? { graph: v.graph } : {}),
          ...(v.thread ? { threadId: v.thread } : {}),
          ...(v.status ? { status: v.status as "pending" } : {}),
          ...(v.limit ? { limit: int("limit", v.limit) } : {}),
          ...(v.cursor ? { cursor: v.cursor } : {}),
        });
        return ExitCode.OK;
      case "resume":
        await resumeCommand(io, flags, need(args[0], "THREAD"), {
          interrupt: v.interrupt,
          run: v.run,
          namespace: v.namespace,
          value: v.value,
          map: v.map,
          steering: v.steering,
          expect: v.expect,
          key: v.key,
          cancelChildren: v["cancel-children"],
        });
        return ExitCode.OK;
      case "steer":
        await steerCommand(io, flags, need(args[0], "THREAD"), need(args[1], "TEXT"), {
          interrupt: v.interrupt,
          run: v.run,
          namespace: v.namespace,
        });
        return ExitCode.OK;
      case "decide":
        await decideCommand(io, flags, {
          ids: v.ids,
          graph: v.graph,
          subAgent: v["sub-agent"],
          thread: v.thread,
          expect: v.expect,
          accept: v.accept,
          reject: v.reject,
          value: v.value,
          steering: v.steering,
          key: v.key,
        });
        return ExitCode.OK;
      case "state":
        await stateCommand(io, flags, need(args[0], "THREAD"), v.subgraphs);
        return ExitCode.OK;
      case "history":
        await historyCommand(io, flags, need(args[0], "THREAD"), int("limit", v.limit));
        return ExitCode.OK;
      case "runs":
        await runsCommand(io, flags, need(args[0], "THREAD"), args[1]);
        return ExitCode.OK;
      case "audit":
        return await auditCommand(io, flags, args[0], {
          thread: v.thread,
          tenant: v.tenant,
          db: v.db,
          postgres: v.postgres,
          schema: v.schema,
          auditKey: v["audit-key"] ?? process.env["REIN_AUDIT_KEY"],
        });
      case "webhooks":
        await webhooksCommand(io, flags, args, {
          events: v.events,
          graph: v.graph,
          grace: int("grace", v.grace),
          limit: int("limit", v.limit),
        });
        return ExitCode.OK;
      case "keys":
        await keysCommand(io, flags, args, {
          name: v.name,
          scopes: v.scopes,
          expires: v.expires,
          tenant: v.tenant,
        });
        return ExitCode.OK;
      default:
        throw new UsageError(`Unknown command "${command}". See rein --help.`);
    }
  } catch (error) {
    return report(io, error, argv.includes("--json"));
  }
}

/** What the CLI reports for an error: its exit code, the error object, a line for people. */
function outcomeOf(error: unknown): { exit: number; body: ErrorBody; line: string } {
  if (
    error instanceof UsageError ||
    (error instanceof Error && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS"))
  )
    return {
      exit: ExitCode.USAGE,
      body: { error: "usage", message: error.message, details: {} },
      line: error.message,
    };
  if (error instanceof ReinApiError) {
    const body = { error: error.code, message: error.message, details: error.details };
    const bulk = bulkRefusalLines(error);
    const latest =
      bulk !== null
        ? `\n${bulk}`
        : error instanceof NotAllowedApiError
          ? `\nnothing was stored (rule ${error.rule}; policy ${JSON.stringify(error.policy)})`
          : error.status === 409
            ? `\nlatest: ${JSON.stringify(error.details)}`
            : "";
    return {
      exit: exitCodeOf(error.status, ExitCode.REFUSED),
      body,
      line: `${error.code} (${error.status}): ${error.message}${latest}`,
    };
  }
  if (ReinError.is(error))
    // Raised here, not by a server (serve, worker): a 4xx means the command line named it.
    return {
      exit: exitCodeOf(statusByCode[error.code] ?? 500, ExitCode.USAGE),
      body: error.toJSON(),
      line: `${error.code}: ${error.message}`,
    };
  const cause =
    error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : "";
  const message = `${error instanceof Error ? error.message : String(error)}${cause}`;
  return {
    exit: ExitCode.FAILURE,
    body: { error: "failure", message, details: {} },
    line: message,
  };
}

/** Prints an error (as JSON on stdout too with `--json`) and returns the exit code. */
function report(io: Io, error: unknown, json: boolean): number {
  const { exit, body, line } = outcomeOf(error);
  io.err(`rein: ${line}\n`);
  if (json) io.out(`${JSON.stringify(body, null, 2)}\n`);
  return exit;
}
