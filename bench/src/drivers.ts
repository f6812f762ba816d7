/**
 * Rein's SQLite store on its two drivers, side by side in one process: node:sqlite (the store of
 * this tree) and better-sqlite3 (the same store at the last commit before the move, extracted by
 * `bench/drivers.sh`). Same graph, same workload, same files on the same disk:
 *
 * - pause + resume: one approval round trip on a fresh thread (a pause, then the answer runs the
 *   run to completion), in rounds whose driver order flips every round;
 * - the approval queue page: `listInterrupts({ status: "pending", limit: 50 })`, the newest page
 *   and a page 1,000 rows deep (keyset cursor), on a file of paused threads;
 * - bytes on disk: each file after a WAL checkpoint, and the logical bytes it holds.
 *
 * Besides wall time, each timing reports the process's CPU time (user + system) per operation:
 * on a machine shared with other work, wall time measures the scheduler as much as the driver.
 *
 * Usage: `bash bench/drivers.sh [--threads N] [--rounds N] [--pages N]`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Command, RunConfig } from "@rein/core";
import type { Checkpointer } from "@rein/core";
import { encodeCursor } from "@rein/core/store";
import { SqliteSaver } from "@rein/sqlite";
import { packageVersion } from "./harness/env.ts";
import { benchApprovalGraph } from "./scenarios/pause-resume.ts";
import { openSqliteProbe, sqliteDiskBytes, sqliteLogicalBytes } from "./harness/sizes.ts";
import { value } from "./harness/sqlite.ts";
import { nowMs, summarize } from "./harness/stats.ts";

/** A store that can be opened on a path: the module `@rein/sqlite` exports `SqliteSaver`. */
interface Driver {
  name: string;
  open(path: string): Checkpointer & { close(): Promise<void> };
}

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    threads: { type: "string", default: "200" },
    rounds: { type: "string", default: "4" },
    pages: { type: "string", default: "300" },
    queue: { type: "string", default: "2000" },
  },
});
const legacyEntry = positionals[0];
if (!legacyEntry) throw new Error("usage: drivers.ts <legacy @rein/sqlite entry> [options]");
const legacy = (await import(legacyEntry)) as { SqliteSaver: typeof SqliteSaver };

const drivers: Driver[] = [
  { name: "node:sqlite", open: (path) => new SqliteSaver({ path }) },
  { name: "better-sqlite3", open: (path) => new legacy.SqliteSaver({ path }) },
];
const dir = mkdtempSync(join(tmpdir(), "rein-drivers-"));

/** Wall milliseconds of each of `count` calls of `fn` (after 20 unmeasured), and CPU ms per call. */
async function measure(count: number, fn: (i: number) => Promise<void>) {
  for (let i = -20; i < 0; i += 1) await fn(i);
  const samples: number[] = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < count; i += 1) {
    const started = nowMs();
    await fn(i);
    samples.push(nowMs() - started);
  }
  const used = process.cpuUsage(cpu);
  return { samples, cpuMs: (used.user + used.system) / 1000 / count };
}

/** Pause + resume round trips of `threads` fresh threads on one file. */
async function roundTrips(driver: Driver, file: string, threads: number) {
  const saver = driver.open(file);
  const graph = benchApprovalGraph(saver);
  try {
    return await measure(threads, async (i) => {
      const thread = RunConfig.thread(`t-${i}`);
      const paused = await graph.invoke({ n: 1 }, thread);
      const done = await graph.resume(thread, Command.resume("yes"));
      if (paused.status !== "interrupted" || done.status !== "done") throw new Error("bad run");
    });
  } finally {
    await saver.close();
  }
}

/** Pauses `count` threads on `file`, then times the newest queue page and one 1,000 rows deep. */
async function queuePages(driver: Driver, file: string, count: number, pages: number) {
  const saver = driver.open(file);
  try {
    const graph = benchApprovalGraph(saver);
    for (let i = 0; i < count; i += 1) await graph.invoke({ n: i }, RunConfig.thread(`q-${i}`));
    const probe = openSqliteProbe(file);
    const at = (column: string) =>
      value<string>(
        probe,
        `SELECT ${column} FROM interrupts WHERE status = 'pending'
         ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET 999`,
      ) ?? "";
    const cursor = encodeCursor([at("created_at"), at("id")]);
    probe.close();
    const time = (query: Parameters<Checkpointer["listInterrupts"]>[0]) =>
      measure(pages, async () => {
        const page = await saver.listInterrupts(query);
        if (page.items.length !== 50) throw new Error(`a page of ${page.items.length}`);
      });
    return {
      newest: await time({ status: "pending", limit: 50 }),
      deep: await time({ status: "pending", limit: 50, cursor }),
    };
  } finally {
    await saver.close();
  }
}

/** Bytes on disk (after a WAL checkpoint) and logical bytes of a closed store file. */
function sizes(file: string): { disk: number; logical: number } {
  const probe = openSqliteProbe(file);
  try {
    return { disk: sqliteDiskBytes(probe, file), logical: sqliteLogicalBytes(probe) };
  } finally {
    probe.close();
  }
}

const threads = Number(args.threads);
const rounds = Number(args.rounds);
const samples = new Map<string, number[]>(drivers.map((d) => [d.name, []]));
const roundMedians = new Map<string, number[]>(drivers.map((d) => [d.name, []]));
const roundCpu = new Map<string, number[]>(drivers.map((d) => [d.name, []]));
const roundFiles = new Map<string, string>();
for (let round = 0; round < rounds; round += 1) {
  const order = round % 2 === 0 ? drivers : [...drivers].reverse();
  for (const driver of order) {
    const file = join(dir, `${driver.name.replace(/\W/g, "_")}-round-${round}.db`);
    const trips = await roundTrips(driver, file, threads);
    samples.get(driver.name)?.push(...trips.samples);
    roundMedians.get(driver.name)?.push(summarize(trips.samples).median);
    roundCpu.get(driver.name)?.push(trips.cpuMs);
    roundFiles.set(driver.name, file);
  }
}
const queue = new Map<string, Awaited<ReturnType<typeof queuePages>>>();
const queueFiles = new Map<string, string>();
for (const driver of drivers) {
  const file = join(dir, `${driver.name.replace(/\W/g, "_")}-queue.db`);
  queue.set(driver.name, await queuePages(driver, file, Number(args.queue), Number(args.pages)));
  queueFiles.set(driver.name, file);
}

const ms = (xs: number[] | undefined) => {
  const s = summarize(xs ?? []);
  return `${s.median.toFixed(3)} ms (p95 ${s.p95.toFixed(3)})`;
};
const list = (xs: number[] | undefined) => (xs ?? []).map((x) => x.toFixed(3)).join(", ");
const cpuOf = (m: { cpuMs: number } | undefined) => `${(m?.cpuMs ?? 0).toFixed(3)} ms`;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
/** The SQLite version a driver links: both savers expose their connection as `db`. */
const sqliteOf = async (driver: Driver): Promise<string> => {
  const saver = driver.open(":memory:");
  const { db } = saver as unknown as { db: { prepare(sql: string): { get(): object } } };
  const version = String(Object.values(db.prepare("SELECT sqlite_version()").get())[0]);
  await saver.close();
  return version;
};
const [modern, old] = drivers as [Driver, Driver];
const lines = [
  `Node ${process.version}; node:sqlite (SQLite ${await sqliteOf(modern)}) vs better-sqlite3 ${packageVersion("better-sqlite3")} (SQLite ${await sqliteOf(old)}); load ${loadavg()[0]?.toFixed(2)} at the end`,
  "",
  `| measurement | ${drivers.map((d) => d.name).join(" | ")} |`,
  `| --- | ${drivers.map(() => "---").join(" | ")} |`,
  `| pause + resume round trip, ${rounds} rounds × ${threads} threads | ${drivers.map((d) => ms(samples.get(d.name))).join(" | ")} |`,
  `| … median of each round | ${drivers.map((d) => list(roundMedians.get(d.name))).join(" | ")} |`,
  `| … CPU per round trip, each round | ${drivers.map((d) => list(roundCpu.get(d.name))).join(" | ")} |`,
  `| queue page (50 of ${args.queue} pending), newest | ${drivers.map((d) => ms(queue.get(d.name)?.newest.samples)).join(" | ")} |`,
  `| … CPU per page | ${drivers.map((d) => cpuOf(queue.get(d.name)?.newest)).join(" | ")} |`,
  `| queue page, 1,000 rows deep (keyset cursor) | ${drivers.map((d) => ms(queue.get(d.name)?.deep.samples)).join(" | ")} |`,
  `| … CPU per page | ${drivers.map((d) => cpuOf(queue.get(d.name)?.deep)).join(" | ")} |`,
];
for (const [label, files, count] of [
  ["after one round", roundFiles, `${threads} finished threads`],
  ["queue file", queueFiles, `${args.queue} paused threads`],
] as const) {
  const measured = drivers.map((d) => sizes(files.get(d.name) ?? ""));
  lines.push(
    `| bytes on disk, ${label} (${count}) | ${measured.map((s) => kb(s.disk)).join(" | ")} |`,
    `| logical bytes, ${label} | ${measured.map((s) => kb(s.logical)).join(" | ")} |`,
  );
}
console.log(lines.join("\n"));
rmSync(dir, { recursive: true, force: true });
