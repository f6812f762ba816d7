/**
 * Rein's LangGraph-protocol layer against LangGraph's own servers, driven by the same
 * `@langchain/langgraph-sdk` `Client` and the same two graphs (`protocol/graphs.*.ts`: a chat
 * agent that asks to approve a refund; two sub-agents that ask in parallel). Servers, one at a
 * time, each in a process of its own: `langgraph dev` (in memory), LangGraph's embed server on
 * Postgres, `rein serve` on SQLite and on Postgres (`/langgraph`).
 *
 *   npm run bench:protocol -- [--ops 160] [--clients 16] [--k 100] [--systems a,b] [--quick]
 *
 * Per graph and server: start→paused (create a thread, stream the run until it pauses) and
 * resume→done (`command: { resume }`, streamed to the end), `--ops` of each by `--clients`
 * clients at once, after a warm-up; their rate, p50/p99 latency and CPU per operation (server
 * process, and Postgres backends, from `/proc`); then K paused threads whose questions are
 * answered one at a time by interrupt id, counting the asking nodes' executions per answer.
 *
 * Prints the side-by-side table and appends one JSON line to `bench/results/langgraph-protocol.jsonl`.
 */
import { appendFileSync, mkdirSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BENCH_DIR } from "./harness/env.ts";
import { DEFAULT_POSTGRES_URL, probePostgres } from "./harness/postgres.ts";
import { GRAPHS, type GraphName } from "./protocol/client.ts";
import { measureGraph, type GraphFigures } from "./protocol/measure.ts";
import {
  startLangGraphDev,
  startLangGraphPostgres,
  startRein,
  SYSTEMS,
  type ProtocolServer,
  type SystemName,
} from "./protocol/servers.ts";
import { renderTable, type SystemResult } from "./protocol/table.ts";

const { values } = parseArgs({
  options: {
    ops: { type: "string" },
    clients: { type: "string", default: "16" },
    k: { type: "string" },
    systems: { type: "string", default: SYSTEMS.join(",") },
    quick: { type: "boolean", default: false },
  },
});
const ops = Number(values.ops ?? (values.quick ? 48 : 160));
const k = Number(values.k ?? (values.quick ? 16 : 100));
const clients = Number(values.clients);
if (![ops, k, clients].every((n) => Number.isInteger(n) && n >= 1))
  throw new Error("--ops, --k and --clients must be whole numbers ≥ 1");
const systems = values.systems.split(",") as SystemName[];
const unknown = systems.filter((s) => !SYSTEMS.includes(s));
if (unknown.length)
  throw new Error(`unknown systems ${unknown.join(", ")}; known: ${SYSTEMS.join(", ")}`);

const postgres = await probePostgres(
  process.env["REIN_BENCH_POSTGRES_URL"] ?? DEFAULT_POSTGRES_URL,
);

/** Starts `system`, or says why it cannot run here. */
async function start(system: SystemName): Promise<ProtocolServer | string> {
  const needsPostgres = system === "langgraph-postgres" || system === "rein-postgres";
  if (needsPostgres && !postgres.ok) return postgres.reason;
  const adminUrl = postgres.ok ? postgres.url : undefined;
  if (system === "langgraph-dev") return startLangGraphDev();
  if (system === "langgraph-postgres") return startLangGraphPostgres(adminUrl as string);
  const server = await startRein(system === "rein-sqlite" ? "sqlite" : "postgres", adminUrl);
  // The layer is served where the SDK looks first (`GET /info`); a server without it is reported.
  const info = await fetch(`${server.apiUrl}/info`).catch(() => null);
  await info?.body?.cancel();
  if (info?.status !== 200) {
    await server.stop();
    return `this build of rein serve has no LangGraph-protocol layer (GET ${new URL(server.apiUrl).pathname}/info → ${info?.status ?? "no answer"})`;
  }
  return server;
}

const results = {} as Record<SystemName, SystemResult>;
const load = loadavg()[0] ?? 0;
const began = Date.now();
for (const system of SYSTEMS) {
  if (!systems.includes(system)) {
    results[system] = { ok: false, reason: "not selected (--systems)" };
    continue;
  }
  const server = await start(system);
  if (typeof server === "string") {
    results[system] = { ok: false, reason: server };
    console.error(`${system}: skipped — ${server}`);
    continue;
  }
  try {
    const graphs = {} as Record<GraphName, GraphFigures>;
    for (const graph of GRAPHS) {
      graphs[graph] = await measureGraph(server, graph, { ops, clients, k, warmup: clients * 2 });
      console.error(`${system} ${graph}: ${JSON.stringify(graphs[graph])}`);
    }
    results[system] = { ok: true, graphs };
  } finally {
    await server.stop();
  }
}

console.log(
  `\n${ops} operations per phase, ${clients} clients, K = ${k}; load average ${load.toFixed(2)} before, ${((Date.now() - began) / 1000).toFixed(0)} s in all\n`,
);
console.log(renderTable(results, GRAPHS));
mkdirSync(join(BENCH_DIR, "results"), { recursive: true });
appendFileSync(
  join(BENCH_DIR, "results/langgraph-protocol.jsonl"),
  `${JSON.stringify({ at: new Date().toISOString(), ops, clients, k, load, results })}\n`,
);
