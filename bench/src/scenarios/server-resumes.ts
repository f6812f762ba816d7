/**
 * Scenario 6 — resumes through one `rein serve`, on SQLite and on Postgres side by side: paused
 * threads of the test graph `ask`, resumed over HTTP (autocannon, 10 connections), each once.
 * Measured per store: resumes per second, and the CPU one resume costs — the server process plus,
 * on Postgres, the backends serving it (from `/proc`) — and the server process alone (what
 * predicts how far more server processes on a bigger machine would go).
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { loadavg } from "node:os";
import pg from "pg";
import { skipped, value, type Cell, type ResultRow } from "../harness/result.ts";
import { bySize, roundsOf, type Scenario, type ScenarioContext } from "../harness/scenario.ts";
import { formatNumber } from "../harness/report.ts";
import { copiedId } from "../load/clone.ts";
import { CpuMeter, withApplicationName } from "../load/cpu.ts";
import { resumeLoad } from "../load/measure.ts";
import { cloneTemplate, post, seedTemplate, TEMPLATE } from "../load/seed.ts";
import { startServer, type ServerProcess, type ServerStore } from "../load/server.ts";

const CONNECTIONS = 10;
const STORES = ["sqlite", "postgres"] as const;
type Store = (typeof STORES)[number];

/** One round of one store. */
interface RoundFigures {
  perSecond: number;
  /** CPU ms per resume: the server process, and the server plus its Postgres backends. */
  serverMs: number;
  totalMs: number;
}

/** A seeded store with its server running and a meter of its CPU. */
interface Served {
  server: ServerProcess;
  meter: () => CpuMeter;
  threads: string[];
  close(): Promise<void>;
}

/** Seeds `threads` paused threads on `store` and starts one server on it. */
async function serve(
  store: Store,
  ctx: ScenarioContext,
  threads: number,
): Promise<Served | string> {
  const ids = Array.from({ length: threads }, (_, i) => copiedId(TEMPLATE, i + 1));
  if (store === "sqlite") {
    const at: ServerStore = { kind: "sqlite", path: join(ctx.tmpDir, "server-resumes.db") };
    await seedTemplate(at);
    await cloneTemplate(at, threads);
    const server = await startServer(at);
    return {
      server,
      meter: () => new CpuMeter(server.pid, null),
      threads: ids,
      close: () => server.stop(),
    };
  }
  if (!ctx.postgres.ok) return ctx.postgres.reason;
  const url = ctx.postgres.url;
  const schema = `rein_bench_${randomBytes(5).toString("hex")}`;
  const application = `rein-bench-${schema}`;
  await seedTemplate({ kind: "postgres", url, schema });
  await cloneTemplate({ kind: "postgres", url, schema }, threads);
  const server = await startServer({
    kind: "postgres",
    url: withApplicationName(url, application),
    schema,
  });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    server,
    meter: () => new CpuMeter(server.pid, { client, application }),
    threads: ids,
    async close() {
      await server.stop();
      await client.query(
        `DROP SCHEMA IF EXISTS "${schema}" CASCADE; DROP SCHEMA IF EXISTS "${schema}_jobs" CASCADE`,
      );
      await client.end();
    },
  };
}

/** Resumes `threads` through `served`, each once, and measures the round. */
async function round(served: Served, threads: string[]): Promise<RoundFigures> {
  const meter = served.meter();
  await meter.start();
  const load = await resumeLoad([served.server.url], [threads], CONNECTIONS);
  const cpu = await meter.stop();
  const [figures] = load.perServer;
  if (figures?.ok !== threads.length)
    throw new Error(
      `server-resumes: ${figures?.ok ?? 0} of ${threads.length} resumes answered 2xx (${figures?.non2xx ?? 0} non-2xx, ${figures?.errors ?? 0} errors)`,
    );
  return {
    perSecond: threads.length / load.seconds,
    serverMs: cpu.server / threads.length,
    totalMs: (cpu.server + cpu.backends) / threads.length,
  };
}

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

const NO_PEER: Cell = { kind: "unsupported", note: "the bench runs no LangGraph.js server" };

export const serverResumes: Scenario = {
  name: "server-resumes",
  title: "Resumes through one server, SQLite and Postgres",
  description:
    "One `rein serve --open` process per store (a SQLite file; a fresh Postgres schema, with its queue and fan-out), each seeded with paused threads of the test graph `ask` (one paused through the API, its rows copied with SQL). Each round resumes a fresh slice of threads through each server, each once (`POST /threads/:id/resume`, autocannon, 10 connections, waiting for the run's result), the two stores one after the other, the order reversed every other round. CPU is read from `/proc` around each round: the server process, and on Postgres also the backends serving it (found by the `application_name` of the server's connections). LangGraph.js has no server in the bench: the rows are Rein's alone, and the targets compare the two stores.",
  async run(ctx) {
    const perRound = bySize(ctx, { full: 1000, quick: 200, tiny: 10 });
    // Unmeasured resumes first, so the first measured round does not pay for warming up.
    const warmup = bySize(ctx, { full: 100, quick: 20, tiny: 2 });
    const rounds = roundsOf(ctx);
    const served = new Map<Store, Served | string>();
    const figures: Record<Store, RoundFigures[]> = { sqlite: [], postgres: [] };
    const loads: number[] = [];
    try {
      for (const store of STORES) {
        ctx.log(`server-resumes: seeding ${store}`);
        served.set(store, await serve(store, ctx, warmup + perRound * rounds));
      }
      for (const [store, s] of served)
        if (typeof s !== "string") {
          const sanity = await post(`${s.server.url}/threads/${TEMPLATE}/resume`, {
            resume: { text: "ok" },
          });
          if (sanity.body["status"] !== "done")
            throw new Error(
              `server-resumes: ${store} did not resume: ${JSON.stringify(sanity.body)}`,
            );
          await round(s, s.threads.slice(0, warmup));
        }
      for (let r = 0; r < rounds; r++) {
        loads.push(loadavg()[0] ?? 0);
        for (const store of r % 2 === 0 ? STORES : [...STORES].reverse()) {
          const s = served.get(store);
          if (!s || typeof s === "string") continue;
          ctx.log(`server-resumes: ${store}, round ${r + 1}/${rounds}`);
          const from = warmup + r * perRound;
          figures[store].push(await round(s, s.threads.slice(from, from + perRound)));
        }
      }
    } finally {
      for (const s of served.values()) if (typeof s !== "string") await s.close();
    }
    const rows: ResultRow[] = [];
    const facts: Record<string, number> = {};
    const metrics = [
      ["perSecond", "resumes per second (1 server, 10 connections)", "count"],
      ["totalMs", "CPU per resume: the server and its Postgres backends", "ms"],
      ["serverMs", "CPU per resume: the server process alone", "ms"],
    ] as const;
    for (const store of STORES) {
      const s = served.get(store);
      for (const [key, metric, unit] of metrics) {
        const values = figures[store].map((f) => f[key]);
        const cell =
          typeof s === "string" ? skipped(s) : value(unit, Number(median(values).toPrecision(3)));
        if (typeof s !== "string") facts[`server-resumes ${key}, ${store}`] = median(values);
        rows.push({
          scenario: "server-resumes",
          variant: store,
          metric: `${metric} (${perRound} threads × ${rounds} rounds)`,
          rein: cell,
          peer: NO_PEER,
          ...(values.length > 1
            ? {
                note: `rounds: ${values.map((x) => formatNumber(x)).join(" / ")}; 1-min load average at each round's start ${loads.map((l) => l.toFixed(2)).join(" / ")}`,
              }
            : {}),
        });
      }
    }
    return { rows, checks: [], facts };
  },
};
