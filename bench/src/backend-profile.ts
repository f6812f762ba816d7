/**
 * `npm run bench:backends [-- --threads N] [-- --pg-options "-c name=value"]`: where a Postgres backend spends its time on one HTTP
 * resume. Seeds N paused threads of the test graph `ask` on a fresh schema, starts one
 * `rein serve --open --postgres` with `track_functions` on for its connections, resumes each
 * thread once (autocannon, 10 connections), and prints per server-side function and per
 * statement kind: calls per resume and backend time per resume (`pg_stat_user_functions`, wall
 * time inside the function: execution and lock waits, not the commit's WAL flush), beside the
 * CPU per resume of the server process and of its backends read from `/proc`. The rest of the
 * backends' CPU (CPU minus time inside functions) is per-statement overhead outside them:
 * parse/bind, the commit, NOTIFY, the LISTEN connection.
 */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import pg from "pg";
import { copiedId } from "./load/clone.ts";
import { CpuMeter, withApplicationName } from "./load/cpu.ts";
import { resumeLoad } from "./load/measure.ts";
import { cloneTemplate, post, seedTemplate, TEMPLATE } from "./load/seed.ts";
import { startServer } from "./load/server.ts";

const { values } = parseArgs({
  options: {
    threads: { type: "string", default: "1000" },
    warmup: { type: "string", default: "100" },
    // More settings for the server's sessions, e.g. "-c plan_cache_mode=force_generic_plan".
    "pg-options": { type: "string", default: "" },
  },
});
const threads = Number(values.threads);
const warmup = Number(values.warmup);
const url = process.env["REIN_BENCH_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = `rein_profile_${randomBytes(5).toString("hex")}`;
const application = `rein-profile-${schema}`;

const admin = new pg.Client({ connectionString: url });
await admin.connect();
try {
  await seedTemplate({ kind: "postgres", url, schema });
  await cloneTemplate({ kind: "postgres", url, schema }, warmup + threads);
  // Superuser settings of the server's own sessions only (the `options` startup parameter).
  const traced = new URL(withApplicationName(url, application));
  traced.searchParams.set("options", `-c track_functions=pl ${values["pg-options"]}`.trim());
  const server = await startServer({ kind: "postgres", url: traced.toString(), schema });
  try {
    const ids = Array.from({ length: warmup + threads }, (_, i) => copiedId(TEMPLATE, i + 1));
    const sanity = await post(`${server.url}/threads/${TEMPLATE}/resume`, {
      resume: { text: "ok" },
    });
    if (sanity.body["status"] !== "done")
      throw new Error(`the template did not resume: ${JSON.stringify(sanity.body)}`);
    await resumeLoad([server.url], [ids.slice(0, warmup)], 10);
    // Statistics are sent when a backend's transaction ends; give them time to land.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const before = await functionStats(admin, schema);
    const meter = new CpuMeter(server.pid, { client: admin, application });
    await meter.start();
    const load = await resumeLoad([server.url], [ids.slice(warmup)], 10);
    const cpu = await meter.stop();
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const after = await functionStats(admin, schema);
    const ok = load.perServer[0]?.ok ?? 0;
    if (ok !== threads) throw new Error(`${ok} of ${threads} resumes answered 2xx`);
    print(before, after, cpu, threads, load.seconds);
  } finally {
    await server.stop();
  }
} finally {
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
}

interface FunctionStat {
  calls: number;
  totalMs: number;
  selfMs: number;
}

async function functionStats(client: pg.Client, name: string): Promise<Map<string, FunctionStat>> {
  await client.query("SELECT pg_stat_clear_snapshot()");
  const { rows } = await client.query<{
    funcname: string;
    calls: string;
    total_time: number;
    self_time: number;
  }>(
    "SELECT funcname, calls, total_time, self_time FROM pg_stat_user_functions WHERE schemaname = $1",
    [name],
  );
  return new Map(
    rows.map((r) => [
      r.funcname,
      { calls: Number(r.calls), totalMs: r.total_time, selfMs: r.self_time },
    ]),
  );
}

function print(
  before: Map<string, FunctionStat>,
  after: Map<string, FunctionStat>,
  cpu: { server: number; backends: number },
  n: number,
  seconds: number,
): void {
  const lines = [
    `${n} HTTP resumes in ${seconds.toFixed(1)} s (${(n / seconds).toFixed(1)}/s), 10 connections`,
    "",
    "| server-side function | calls per resume | backend ms per resume (total) | (self) |",
    "| --- | ---: | ---: | ---: |",
  ];
  let inFunctions = 0;
  for (const [name, a] of [...after].sort((x, y) => y[1].totalMs - x[1].totalMs)) {
    const b = before.get(name) ?? { calls: 0, totalMs: 0, selfMs: 0 };
    const calls = (a.calls - b.calls) / n;
    if (calls === 0) continue;
    const total = (a.totalMs - b.totalMs) / n;
    inFunctions += (a.selfMs - b.selfMs) / n;
    lines.push(
      `| ${name} | ${calls.toFixed(2)} | ${total.toFixed(3)} | ${((a.selfMs - b.selfMs) / n).toFixed(3)} |`,
    );
  }
  lines.push(
    "",
    `CPU per resume: server process ${(cpu.server / n).toFixed(2)} ms, its backends ${(cpu.backends / n).toFixed(2)} ms ` +
      `(of which ${inFunctions.toFixed(2)} ms of wall time inside server-side functions).`,
  );
  console.log(lines.join("\n"));
}
