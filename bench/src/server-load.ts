/**
 * A bounded load test of `rein serve` on loopback, at the sizes of the issue: the approval queue
 * with 100,000 pending interrupts, 200 concurrent SSE clients of the live queue, and resumes per
 * second with their latency (autocannon). On SQLite with one server; on Postgres with two server
 * processes against one database by default, load split across both.
 *
 *   npm run bench:server -- [--pending 100000] [--postgres] [--processes N] [--resumes 2000]
 *                           [--connections 10] [--sse 200] [--pages 200]
 *
 * Seeding: one thread of the test graph `ask` is paused through the API, then its rows are copied
 * pending − 1 times with SQL while no server runs (`load/clone.ts`); the servers then start on
 * the seeded store. After the resumes, the answered interrupts, the pending ones and the audit
 * lines are counted with SQL: every 2xx must have answered exactly one interrupt, once.
 *
 * Prints a markdown table and appends one JSON line to `bench/results/server-load.jsonl`.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { encodeCursor } from "@rein/core/store";
import pg from "pg";
import { BENCH_DIR } from "./harness/env.ts";
import { DEFAULT_POSTGRES_URL } from "./harness/postgres.ts";
import { nowMs, quantile } from "./harness/stats.ts";
import { copiedId } from "./load/clone.ts";
import { pageLatencies, resumeLoad, sseFanout } from "./load/measure.ts";
import { CpuMeter, withApplicationName } from "./load/cpu.ts";
import { count, openProbe, type StoreProbe } from "./load/probe.ts";
import { cloneTemplate, post, seedTemplate, TEMPLATE } from "./load/seed.ts";
import { startServer, type ServerProcess, type ServerStore } from "./load/server.ts";

const { values } = parseArgs({
  options: {
    pending: { type: "string", default: "100000" },
    postgres: { type: "boolean", default: false },
    processes: { type: "string" },
    resumes: { type: "string", default: "2000" },
    connections: { type: "string", default: "10" },
    sse: { type: "string", default: "200" },
    pages: { type: "string", default: "200" },
  },
});
const pending = Number(values.pending);
const processes = Number(values.processes ?? (values.postgres ? 2 : 1));
const resumes = Math.min(Number(values.resumes), pending - 2);
const connections = Number(values.connections);
const sseClients = Number(values.sse);
const pageRequests = Number(values.pages);
if (![pending, processes, resumes, connections, sseClients, pageRequests].every((n) => n >= 1))
  throw new Error(
    "--pending, --processes, --resumes, --connections, --sse and --pages must be ≥ 1",
  );
if (!values.postgres && processes !== 1)
  throw new Error("SQLite runs one server process (the file has one writer); drop --processes");

const clone = (n: number): string => copiedId(TEMPLATE, n);

const postgresUrl = process.env["REIN_BENCH_POSTGRES_URL"] ?? DEFAULT_POSTGRES_URL;

const ms = (samples: readonly number[], q: number): number =>
  Number(quantile(samples, q).toFixed(q === 1 ? 0 : 2));

const answeredSql = `SELECT count(*) AS n FROM interrupts WHERE status = 'answered' AND thread_id LIKE '${TEMPLATE}-c%'`;
const pendingSql = `SELECT count(*) AS n FROM interrupts WHERE status = 'pending'`;
const auditSql = `SELECT count(*) AS n FROM audit WHERE thread_id LIKE '${TEMPLATE}-c%'`;

/** The `application_name` of server `i`'s connections. */
const applicationOf = (i: number): string => `rein-load-${process.pid}-${i}`;
/** A connection that finds the servers' Postgres backends (Postgres only). */
let backendClient: pg.Client | null = null;
const backendsOf = (i: number) =>
  backendClient ? { client: backendClient, application: applicationOf(i) } : null;

async function measure(store: ServerStore, servers: ServerProcess[], probe: StoreProbe) {
  const urls = servers.map((s) => s.url);
  const seededPending = await count(probe, pendingSql);
  if (seededPending !== pending)
    throw new Error(`expected ${pending} pending interrupts after seeding, found ${seededPending}`);
  const auditBefore = await count(probe, auditSql);

  // A copy resumes like the original: 200, the run done with the answer.
  const sanity = await post(`${urls[urls.length - 1] as string}/threads/${clone(1)}/resume`, {
    resume: { text: "ok" },
  });
  const sanityValues = sanity.body["values"] as { answer?: string } | undefined;
  if (sanity.status !== 200 || sanity.body["status"] !== "done" || sanityValues?.answer !== "ok")
    throw new Error(
      `resuming a copied thread failed: ${sanity.status} ${JSON.stringify(sanity.body)}`,
    );
  const auditPerAnswer = (await count(probe, auditSql)) - auditBefore;

  // Queue pages: the newest 50, and a page 50,000 deep by keyset cursor.
  let newest = "";
  const firstPage = await pageLatencies(
    urls,
    "/interrupts?status=pending&limit=50",
    pageRequests,
    (b) => {
      if (b.items.length !== 50 || !b.nextCursor)
        throw new Error("first page: expected 50 items and a cursor");
      newest = (b.items[0] as { threadId?: string }).threadId ?? "";
    },
  );
  const depth = Math.floor(pending / 2);
  const [at, expected] = await probe.rows<{ created_at: string; id: string }>(
    `SELECT created_at, id FROM interrupts WHERE status = 'pending' ORDER BY created_at DESC, id DESC LIMIT 2 OFFSET ${depth - 1}`,
  );
  if (!at || !expected) throw new Error("no row at the deep page's offset");
  const cursor = encodeCursor([at.created_at, at.id]);
  const deepPage = await pageLatencies(
    urls,
    `/interrupts?status=pending&limit=50&cursor=${cursor}`,
    pageRequests,
    (b) => {
      if (b.items.length !== 50 || b.items[0]?.id !== expected.id)
        throw new Error(`deep page: expected 50 items from ${expected.id}, got ${b.items[0]?.id}`);
    },
  );

  // SSE: every client gets its first page, then an answer to the newest interrupt (made through
  // the first server) must reach all of them.
  const sse = await sseFanout(urls, sseClients, async () => {
    const r = await post(`${urls[0] as string}/threads/${newest}/resume`, {
      resume: { text: "ok" },
    });
    if (r.status !== 200) throw new Error(`SSE answer: ${r.status}`);
  });

  // Resumes: disjoint threads per server, each resumed once.
  const used = new Set([clone(1), newest]);
  const list: string[] = [];
  for (let n = 2; list.length < resumes; n++) if (!used.has(clone(n))) list.push(clone(n));
  const split = urls.map((_, s) => list.filter((__, i) => i % urls.length === s));
  // CPU of each server process and of the Postgres backends serving it, around the resumes.
  const meters = servers.map((server, i) => new CpuMeter(server.pid, backendsOf(i)));
  for (const meter of meters) await meter.start();
  const load = await resumeLoad(urls, split, connections);
  const cpu = await Promise.all(meters.map((meter) => meter.stop()));
  const ok = load.perServer.reduce((a, r) => a + r.ok, 0);

  // No answer lost or applied twice: each 2xx answered one interrupt, with one answer's audit.
  const answered = await count(probe, answeredSql);
  const stillPending = await count(probe, pendingSql);
  const auditAfter = await count(probe, auditSql);
  const expectedAnswered = ok + 2;
  const consistent =
    answered === expectedAnswered &&
    stillPending === pending - expectedAnswered &&
    auditAfter - auditBefore === auditPerAnswer * expectedAnswered;
  return {
    store: store.kind,
    processes: urls.length,
    pending,
    queueFirstPage: { p50: ms(firstPage, 0.5), p99: ms(firstPage, 0.99), n: firstPage.length },
    queueDeepPage: { depth, p50: ms(deepPage, 0.5), p99: ms(deepPage, 0.99), n: deepPage.length },
    sse: {
      clients: sseClients,
      firstPageP50: ms(sse.firstPage, 0.5),
      firstPageMax: ms(sse.firstPage, 1),
      answerP50: ms(sse.answer, 0.5),
      answerMax: ms(sse.answer, 1),
    },
    resumes: {
      sent: list.length,
      ok,
      perSecond: Number((ok / load.seconds).toFixed(1)),
      // CPU ms per resume, all servers together: the server processes, and with their backends.
      cpuServerMs: Number((cpu.reduce((a, c) => a + c.server, 0) / ok).toFixed(2)),
      cpuTotalMs: Number((cpu.reduce((a, c) => a + c.server + c.backends, 0) / ok).toFixed(2)),
      seconds: Number(load.seconds.toFixed(2)),
      connectionsPerServer: connections,
      perServer: load.perServer,
    },
    check: {
      answered,
      expectedAnswered,
      stillPending,
      auditPerAnswer,
      auditDelta: auditAfter - auditBefore,
      consistent,
    },
  };
}

type Figures = Awaited<ReturnType<typeof measure>>;

function table(
  f: Figures,
  seed: { apiMs: number; cloneMs: number; rows: number },
  load: string,
): string {
  const perServer = f.resumes.perServer
    .map(
      (r, i) =>
        `server ${i + 1}: p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.ok} ok, ${r.non2xx} non-2xx, ${r.errors} errors`,
    )
    .join("; ");
  const rows: [string, string][] = [
    ["store", `${f.store}, ${f.processes} \`rein serve\` process${f.processes > 1 ? "es" : ""}`],
    ["pending interrupts", f.pending.toLocaleString("en-US")],
    [
      "seeding",
      `template through the API ${(seed.apiMs / 1000).toFixed(1)} s, ${seed.rows.toLocaleString("en-US")} rows copied with SQL in ${(seed.cloneMs / 1000).toFixed(1)} s`,
    ],
    [
      `queue page of 50, newest (${f.queueFirstPage.n} requests)`,
      `p50 ${f.queueFirstPage.p50} ms, p99 ${f.queueFirstPage.p99} ms`,
    ],
    [
      `queue page of 50, ${f.queueDeepPage.depth.toLocaleString("en-US")} deep by cursor (${f.queueDeepPage.n} requests)`,
      `p50 ${f.queueDeepPage.p50} ms, p99 ${f.queueDeepPage.p99} ms`,
    ],
    [
      `${f.sse.clients} SSE clients, first page`,
      `p50 ${f.sse.firstPageP50} ms, all by ${f.sse.firstPageMax} ms`,
    ],
    [
      `an answer reaches all ${f.sse.clients} SSE clients`,
      `p50 ${f.sse.answerP50} ms, all by ${f.sse.answerMax} ms`,
    ],
    [
      `resumes (${f.resumes.sent} threads, ${f.resumes.connectionsPerServer} connections per server)`,
      `${f.resumes.perSecond}/s (${f.resumes.ok} ok in ${f.resumes.seconds} s)`,
    ],
    ["resume latency", perServer],
    [
      "CPU per resume (from /proc)",
      `${f.resumes.cpuTotalMs} ms for the server${f.processes > 1 ? "s" : ""}${f.store === "postgres" ? " and their Postgres backends" : ""}, ${f.resumes.cpuServerMs} ms in the server process${f.processes > 1 ? "es" : ""} alone`,
    ],
    [
      "answers checked with SQL",
      `${f.check.answered} answered (expected ${f.check.expectedAnswered}), ${f.check.stillPending} pending, ${f.check.auditDelta} audit lines (${f.check.auditPerAnswer} per answer): ${f.check.consistent ? "consistent" : "**INCONSISTENT**"}`,
    ],
    ["load average (1, 5, 15 min) before → after", load],
  ];
  return ["| measure | value |", "| --- | --- |", ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join(
    "\n",
  );
}

async function main(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "rein-load-"));
  const schema = `rein_load_${Date.now().toString(36)}`;
  const store: ServerStore = values.postgres
    ? { kind: "postgres", url: postgresUrl, schema }
    : { kind: "sqlite", path: join(dir, "rein.db") };
  const loadBefore = loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
  const servers: ServerProcess[] = [];
  let probe: StoreProbe | null = null;
  try {
    const t0 = nowMs();
    await seedTemplate(store);
    const t1 = nowMs();
    const report = await cloneTemplate(store, pending - 1);
    const t2 = nowMs();
    const rows = Object.values(report).reduce((a, b) => a + b, 0);
    console.error(
      `seeded: template ${(t1 - t0).toFixed(0)} ms, ${rows} rows copied in ${(t2 - t1).toFixed(0)} ms (${JSON.stringify(report)})`,
    );
    for (let i = 0; i < processes; i++)
      servers.push(
        await startServer(
          store.kind === "postgres"
            ? { ...store, url: withApplicationName(store.url, applicationOf(i)) }
            : store,
        ),
      );
    if (store.kind === "postgres") {
      backendClient = new pg.Client({ connectionString: store.url });
      await backendClient.connect();
    }
    probe = await openProbe(store);
    const figures = await measure(store, servers, probe);
    const loadAfter = loadavg()
      .map((x) => x.toFixed(2))
      .join(" ");
    const load = `${loadBefore} → ${loadAfter}`;
    console.log(table(figures, { apiMs: t1 - t0, cloneMs: t2 - t1, rows }, load));
    mkdirSync(join(BENCH_DIR, "results"), { recursive: true });
    appendFileSync(
      join(BENCH_DIR, "results", "server-load.jsonl"),
      JSON.stringify({
        date: new Date().toISOString(),
        argv: process.argv.slice(2),
        seed: { apiMs: t1 - t0, cloneMs: t2 - t1, rows: report },
        load: { before: loadBefore, after: loadAfter },
        ...figures,
      }) + "\n",
    );
    return figures.check.consistent ? 0 : 1;
  } finally {
    await probe?.close();
    await backendClient?.end();
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
    if (store.kind === "postgres") {
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      await client.query(
        `DROP SCHEMA IF EXISTS "${schema}" CASCADE; DROP SCHEMA IF EXISTS "${schema}_jobs" CASCADE`,
      );
      await client.end();
    }
  }
}

process.exitCode = await main();
