/**
 * Where Rein's library spends its time and bytes on the paths its floors measure, for the
 * causes behind the floor ratios of `npm run bench`:
 *
 * - CPU: V8's sampling profiler (node:inspector), in this process, around a workload that does
 *   nothing but the runtime's own work — the 10-node chain of scenario 1 with a MemorySaver, and
 *   scenario 2's pause + resume on a SQLite file (WAL). Self time by area (Rein's source folders,
 *   the SQLite driver's native calls, the garbage collector, Node's internals) and by function.
 * - Statements: every node:sqlite call of the same round trip, timed and counted by its SQL.
 * - Bytes: paused threads (scenario 4's graph) on a SQLite file, the logical bytes per table and
 *   column, the file's size after VACUUM, and each index's share of it (the size drop when that
 *   index alone is dropped from a vacuumed copy).
 *
 * npm run bench:library-profile                  # 20,000 supersteps, 2,000 round trips, 5,000 threads
 * npm run bench:library-profile -- --ops 5000    # supersteps; round trips are ÷10
 */
import { copyFileSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import { Session, type Profiler } from "node:inspector/promises";
import { parseArgs } from "node:util";
import { Command, END, lastValue, MemorySaver, RunConfig, START, StateGraph } from "@rein/core";
import { SqliteSaver } from "@rein/sqlite";
import { column, openSqlite, value, type Db } from "./harness/sqlite.ts";
import { formatNumber } from "./harness/report.ts";
import { benchApprovalGraph } from "./scenarios/pause-resume.ts";

/** A workload: a warm-up and a measured loop of `ops` operations. */
interface Workload {
  name: string;
  unit: string;
  run(ops: number, prefix: string): Promise<void>;
  close?(): Promise<void>;
}

function chainWorkload(): Workload {
  const names = Array.from({ length: 10 }, (_, i) => `n${i}`);
  let builder = new StateGraph({ n: lastValue<number>(() => 0) });
  for (const name of names) builder = builder.addNode(name, (s) => ({ n: s.n + 1 }));
  builder = builder.addEdge(START, "n0").addEdge("n9", END);
  for (let i = 1; i < names.length; i++) builder = builder.addEdge(`n${i - 1}`, `n${i}`);
  const graph = builder.compile({ checkpointer: new MemorySaver() });
  return {
    name: "superstep (10-node chain, MemorySaver)",
    unit: "supersteps",
    async run(ops, prefix) {
      for (let i = 0; i < ops / 10; i++) {
        const r = await graph.invoke({ n: 0 }, { threadId: `${prefix}-${i}` });
        if (r.status !== "done" || r.values.n !== 10) throw new Error("chain did not finish");
      }
    },
  };
}

function roundTripWorkload(): Workload {
  const dir = mkdtempSync(join(tmpdir(), "rein-cpu-profile-"));
  // The same settings as the bench's SQLite store (harness/stores.ts).
  const saver = new SqliteSaver({ path: join(dir, "rein.db"), synchronous: "normal" });
  const graph = benchApprovalGraph(saver);
  return {
    name: "pause + resume (SQLite file, WAL)",
    unit: "round trips",
    async run(ops, prefix) {
      for (let i = 0; i < ops; i++) {
        const threadId = `${prefix}-${i}`;
        const paused = await graph.invoke({ n: 1 }, { threadId });
        if (paused.status !== "interrupted") throw new Error("expected a pause");
        const done = await graph.resume(RunConfig.thread(threadId), Command.resume("yes"));
        if (done.status !== "done") throw new Error("expected the run to finish");
      }
    },
    async close() {
      await saver.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The area a sampled frame belongs to, from its script URL and function name. */
function areaOf(frame: Profiler.ProfileNode["callFrame"]): string {
  const { url, functionName } = frame;
  if (url === "") {
    if (functionName === "(garbage collector)") return "V8: garbage collector";
    if (functionName === "(program)" || functionName === "(idle)") return "V8: program / idle";
    return `native: ${functionName || "(anonymous)"}`;
  }
  const path = url.replace(/^file:\/\//, "");
  const rein = /packages\/([^/]+)\/src\/(?:([^/]+)\/)?/.exec(path);
  if (rein) return `rein ${rein[1]}/${rein[2] ?? ""}`;
  if (path.startsWith("node:")) return `node: ${path.slice(5).split("/")[0]}`;
  if (path.includes(`${sep}node_modules${sep}`)) {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    return `dependency ${pkg?.[1] ?? "?"}`;
  }
  return path;
}

/** Self time (µs) per profile node, from the samples and their time deltas. */
function selfTimes(profile: Profiler.Profile): Map<number, number> {
  const self = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    const id = samples[i] as number;
    self.set(id, (self.get(id) ?? 0) + (deltas[i] ?? 0));
  }
  return self;
}

function top(map: Map<string, number>, n: number): [string, number][] {
  return [...map].sort((a, b) => b[1] - a[1]).slice(0, n);
}

async function profileWorkload(
  session: Session,
  workload: Workload,
  ops: number,
  rows: number,
): Promise<void> {
  await workload.run(Math.max(10, Math.floor(ops / 10)), "warm");
  await session.post("Profiler.start");
  const started = process.cpuUsage();
  const wall = performance.now();
  await workload.run(ops, "run");
  const cpu = process.cpuUsage(started);
  const elapsed = performance.now() - wall;
  const { profile } = await session.post("Profiler.stop");
  await workload.close?.();

  const self = selfTimes(profile);
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0;
    // The profiler's own stop call is sampled too: it is not the workload's.
    if (us === 0 || node.callFrame.url === "node:inspector") continue;
    total += us;
    const area = areaOf(node.callFrame);
    byArea.set(area, (byArea.get(area) ?? 0) + us);
    // The file, not the line: tsx's transpiled modules report line 1 for every function.
    const where = node.callFrame.url
      .replace(/^.*\/packages\//, "")
      .replace(/^.*\/node_modules\//, "");
    const key = `${node.callFrame.functionName || "(anonymous)"} ${where}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  }
  const perOp = (us: number) => `${formatNumber(us / ops)} µs`;
  const share = (us: number) => `${((100 * us) / total).toFixed(1)}%`;
  console.log(`\n## ${workload.name}: ${ops} ${workload.unit}`);
  console.log(
    `wall ${formatNumber((elapsed * 1000) / ops)} µs, CPU ${perOp(cpu.user + cpu.system)} per one (user ${perOp(cpu.user)}, system ${perOp(cpu.system)}); profiled ${perOp(total)}`,
  );
  console.log("\n| area | self time per one | share |\n|---|---:|---:|");
  for (const [area, us] of top(byArea, rows))
    console.log(`| ${area} | ${perOp(us)} | ${share(us)} |`);
  console.log("\n| function | self time per one | share |\n|---|---:|---:|");
  for (const [fn, us] of top(byFunction, rows))
    console.log(`| \`${fn}\` | ${perOp(us)} | ${share(us)} |`);
}

/** Per SQL text: calls and wall time (µs) inside node:sqlite, summed. */
type StatementTimes = Map<string, { calls: number; us: number }>;

/**
 * Times every node:sqlite statement call (run, get, all, iterate) while `body` runs, keyed by
 * its SQL: the round trip's database work, statement by statement. Separate from the CPU
 * profile, whose samples the timing calls would skew.
 */
async function timeStatements(body: () => Promise<void>): Promise<StatementTimes> {
  const { StatementSync } = process.getBuiltinModule("node:sqlite");
  const proto = StatementSync.prototype as unknown as Record<string, unknown>;
  const methods = ["run", "get", "all", "iterate"] as const;
  const originals = methods.map((m) => proto[m] as (...args: unknown[]) => unknown);
  const times: StatementTimes = new Map();
  methods.forEach((method, i) => {
    const original = originals[i] as (...args: unknown[]) => unknown;
    proto[method] = function (this: { sourceSQL: string }, ...args: unknown[]) {
      const started = performance.now();
      try {
        return Reflect.apply(original, this, args);
      } finally {
        const sql = this.sourceSQL.replace(/\s+/g, " ").trim();
        const entry = times.get(sql) ?? { calls: 0, us: 0 };
        entry.calls += 1;
        entry.us += (performance.now() - started) * 1000;
        times.set(sql, entry);
      }
    };
  });
  try {
    await body();
  } finally {
    methods.forEach((method, i) => (proto[method] = originals[i]));
  }
  return times;
}

async function statementTable(ops: number, rows: number): Promise<void> {
  const workload = roundTripWorkload();
  await workload.run(Math.max(10, Math.floor(ops / 10)), "warm");
  const wall = performance.now();
  const times = await timeStatements(() => workload.run(ops, "run"));
  const elapsed = (performance.now() - wall) * 1000;
  await workload.close?.();
  let calls = 0;
  let us = 0;
  let transactions = 0;
  for (const [sql, t] of times) {
    calls += t.calls;
    us += t.us;
    if (/^COMMIT/i.test(sql)) transactions += t.calls;
  }
  console.log(`\n## pause + resume (SQLite): statements, ${ops} round trips`);
  console.log(
    `per round trip: ${formatNumber(calls / ops)} statement calls, ${formatNumber(transactions / ops)} commits, ${formatNumber(us / ops)} µs inside node:sqlite of ${formatNumber(elapsed / ops)} µs wall`,
  );
  console.log(
    "\n| statement | calls per one | µs per one | share of statement time |\n|---|---:|---:|---:|",
  );
  for (const [sql, t] of [...times].sort((a, b) => b[1].us - a[1].us).slice(0, rows)) {
    // A long column list says less than the table and the condition: fold it.
    const folded = sql
      .replace(/^SELECT (?!\()[^()]{40,}? FROM/, "SELECT … FROM")
      .replace(/^INSERT INTO (\w+) \([^)]*\) VALUES \([^)]*\)/, "INSERT INTO $1 (…) VALUES (…)");
    const text = folded.length > 140 ? `${folded.slice(0, 137)}…` : folded;
    console.log(
      `| \`${text.replace(/\|/g, "\\|")}\` | ${formatNumber(t.calls / ops)} | ${formatNumber(t.us / ops)} | ${((100 * t.us) / us).toFixed(1)}% |`,
    );
  }
}

/** Scenario 4's graph: one ticket whose `review` node asks for approval. */
function ticketGraph(saver: SqliteSaver) {
  return new StateGraph({
    ticket: lastValue<number>(() => -1),
    ask: lastValue<boolean>(() => true),
    decision: lastValue<string>(() => ""),
  })
    .addNode("review", (s, ctx) => ({ decision: ctx.interrupt<string>({ ticket: s.ticket }) }))
    .addEdge(START, "review")
    .addEdge("review", END)
    .compile({ checkpointer: saver });
}

/** The file's size after VACUUM, on a copy, with `dropIndex` dropped first when given. */
function vacuumedBytes(path: string, dropIndex?: string): number {
  const copy = `${path}.copy`;
  copyFileSync(path, copy);
  const db = openSqlite(copy, { mustExist: true });
  try {
    if (dropIndex) db.exec(`DROP INDEX "${dropIndex.replace(/"/g, '""')}"`);
    db.exec("VACUUM");
  } finally {
    db.close();
  }
  const size = statSync(copy).size;
  rmSync(copy);
  return size;
}

/** Logical bytes per column (sum of stored lengths), for every table that holds any. */
function logicalBytesByColumn(db: Db): [string, number][] {
  const tables = column<string>(
    db,
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
  );
  const out: [string, number][] = [];
  for (const table of tables)
    for (const name of column<string>(db, "SELECT name FROM pragma_table_info(?)", table)) {
      const bytes =
        value<number>(
          db,
          `SELECT coalesce(sum(length(CAST("${name}" AS BLOB))), 0) FROM "${table}"`,
        ) ?? 0;
      if (bytes > 0) out.push([`${table}.${name}`, bytes]);
    }
  return out;
}

async function bytesTable(threads: number, rows: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "rein-bytes-profile-"));
  const path = join(dir, "rein.db");
  try {
    const saver = new SqliteSaver({ path, synchronous: "normal" });
    const graph = ticketGraph(saver);
    for (let i = 0; i < threads; i++) {
      const r = await graph.invoke({ ticket: i, ask: true }, { threadId: `ticket-${i}` });
      if (r.status !== "interrupted") throw new Error("expected a pause");
    }
    await saver.close();
    const db = openSqlite(path, { mustExist: true });
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    const onDisk = statSync(path).size;
    const columns = logicalBytesByColumn(db);
    const indexes = db
      .prepare(
        "SELECT name, tbl_name AS tbl FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL",
      )
      .all() as { name: string; tbl: string }[];
    db.close();
    const vacuumed = vacuumedBytes(path);
    const perThread = (bytes: number) => formatNumber(bytes / threads);
    const logical = columns.reduce((sum, [, bytes]) => sum + bytes, 0);
    console.log(`\n## paused threads (SQLite): ${threads} threads, bytes per thread`);
    console.log(
      `on disk ${perThread(onDisk)} B as written, ${perThread(vacuumed)} B after VACUUM; logical ${perThread(logical)} B`,
    );
    console.log("\n| column | logical bytes per thread |\n|---|---:|");
    for (const [name, bytes] of columns.sort((a, b) => b[1] - a[1]).slice(0, rows))
      console.log(`| ${name} | ${perThread(bytes)} |`);
    const byIndex = indexes
      .map(({ name, tbl }) => [`${tbl}.${name}`, vacuumed - vacuumedBytes(path, name)] as const)
      .filter(([, bytes]) => bytes > 4096)
      .sort((a, b) => b[1] - a[1]);
    const indexed = byIndex.reduce((sum, [, bytes]) => sum + bytes, 0);
    console.log(
      `\n| index (declared; primary keys not listed) | bytes per thread after VACUUM |\n|---|---:|`,
    );
    for (const [name, bytes] of byIndex) console.log(`| ${name} | ${perThread(bytes)} |`);
    console.log(
      `| **all declared indexes** | **${perThread(indexed)}** (${((100 * indexed) / vacuumed).toFixed(0)}% of the vacuumed file) |`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      ops: { type: "string", default: "20000" },
      threads: { type: "string", default: "5000" },
      rows: { type: "string", default: "15" },
    },
  });
  const threads = Number(values.threads);
  if (!Number.isInteger(threads) || threads < 100)
    throw new Error("--threads takes an integer of 100 or more");
  const ops = Number(values.ops);
  const rows = Number(values.rows);
  if (!Number.isInteger(ops) || ops < 100) throw new Error("--ops takes an integer of 100 or more");
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  // 100 µs between samples: a superstep is tens of microseconds, so the default 1 ms would see
  // too few of them to rank functions.
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  console.log(`# Rein CPU profile (Node ${process.version})`);
  await profileWorkload(session, chainWorkload(), ops, rows);
  await profileWorkload(session, roundTripWorkload(), Math.max(100, Math.floor(ops / 10)), rows);
  session.disconnect();
  await statementTable(Math.max(100, Math.floor(ops / 10)), rows);
  await bytesTable(threads, rows);
}

await main();
