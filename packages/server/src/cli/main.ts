/**
 * `rein`: the command line of Rein. `serve` and `worker` run processes; the other commands talk
 * to a server (`--url`, default `$REIN_URL` or http://127.0.0.1:8080; `--token` or `$REIN_TOKEN`).
 */
import { parseArgs } from "node:util";
import { ReinApiError } from "@rein/client";
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
import { statusByCode, type ErrorBody } from "../errors.ts";
import { ExitCode, exitCodeOf, processIo, type Io } from "./output.ts";
import { UsageError, serve } from "./serve.ts";
import { webhooksCommand } from "./webhooks.ts";
import { worker } from "./worker.ts";

const HELP = `rein — serve and steer durable agent runs

Processes:
  rein serve  [--db FILE | --postgres URL [--schema S] [--concurrency 2]] --graphs MODULE
              [--port 8080] [--host 127.0.0.1] [--tokens FILE | --open] [--cors ORIGIN]...
              [--log-level info|silent]
  rein worker --postgres URL [--schema S] [--concurrency 4] --graphs MODULE
              runs queued background runs, takes over runs of dead processes, fires deadlines

Talking to a server (--url URL, --token TOKEN, --json: results and errors as JSON):
  rein threads                                      threads of your tenant
  rein start GRAPH [--thread ID] [--input JSON]     new thread, first run (waits)
  rein interrupts [--graph G] [--thread T] [--status S] [--limit N] [--cursor C]
  rein resume THREAD (--value JSON | --map JSON) [--interrupt ID | --run RUN --namespace a/b]
              [--steering TEXT] [--expect CHECKPOINT] [--key IDEMPOTENCY_KEY] [--cancel-children]
  rein steer THREAD TEXT [--interrupt ID | --run RUN --namespace a/b]
  rein state THREAD [--subgraphs]
  rein history THREAD [--limit N]
  rein runs THREAD [RUN]
  rein webhooks add URL --events a,b [--graph G1,G2]   subscribe (admin); prints the secret once
  rein webhooks list | remove ID | rotate ID [--grace SECONDS] | deliveries ID [--limit N]

Exit codes: 0 done; 1 server failure or unreachable; 2 usage; 3 refused (4xx); 4 conflict (409:
stale target or busy thread: re-read and decide again).
`;

const OPTIONS = {
  db: { type: "string" },
  postgres: { type: "string" },
  graphs: { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  tokens: { type: "string" },
  open: { type: "boolean", default: false },
  cors: { type: "string", multiple: true },
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
  subgraphs: { type: "boolean", default: false },
  concurrency: { type: "string" },
  schema: { type: "string" },
  events: { type: "string" },
  grace: { type: "string" },
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
            open: v.open,
            cors: v.cors,
            logLevel: v["log-level"] ?? "info",
            schema: v.schema,
            concurrency: int("concurrency", v.concurrency) ?? 2,
          },
          io,
          stop,
        );
      case "worker":
        return await worker(
          {
            postgres: v.postgres,
            schema: v.schema,
            graphs: v.graphs,
            concurrency: int("concurrency", v.concurrency) ?? 4,
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
      case "state":
        await stateCommand(io, flags, need(args[0], "THREAD"), v.subgraphs);
        return ExitCode.OK;
      case "history":
        await historyCommand(io, flags, need(args[0], "THREAD"), int("limit", v.limit));
        return ExitCode.OK;
      case "runs":
        await runsCommand(io, flags, need(args[0], "THREAD"), args[1]);
        return ExitCode.OK;
      case "webhooks":
        await webhooksCommand(io, flags, args, {
          events: v.events,
          graph: v.graph,
          grace: int("grace", v.grace),
          limit: int("limit", v.limit),
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
    const latest = error.status === 409 ? `\nlatest: ${JSON.stringify(error.details)}` : "";
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
