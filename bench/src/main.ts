/**
 * `npm run bench [-- --quick] [-- <scenario> ...]`: runs the scenarios on Rein and LangGraph.js
 * side by side and writes RESULTS.md and raw JSON lines.
 *
 * A full run of every scenario writes `bench/RESULTS.md`; a quick run or a subset writes
 * `bench/results/latest.md` instead, so a partial run never overwrites the committed results.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BENCH_DIR, describeEnvironment } from "./harness/env.ts";
import { probePostgres } from "./harness/postgres.ts";
import {
  renderJsonLines,
  renderMarkdown,
  writeText,
  type ScenarioReport,
} from "./harness/report.ts";
import type { Size } from "./harness/scenario.ts";
import { nowMs } from "./harness/stats.ts";
import { SCENARIOS } from "./scenarios/index.ts";

const USAGE = `Usage: npm run bench -- [--quick | --tiny] [--rounds N] [--out FILE] [scenario ...]
--rounds: rounds of the scenarios that repeat (pause-resume), the order reversed every other
round; 3 for a full run, 1 otherwise.
Scenarios: ${SCENARIOS.map((s) => s.name).join(", ")}`;

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      quick: { type: "boolean" },
      tiny: { type: "boolean" },
      out: { type: "string" },
      rounds: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const unknown = positionals.filter((name) => !SCENARIOS.some((s) => s.name === name));
  if (unknown.length > 0) {
    console.error(`Unknown scenario(s): ${unknown.join(", ")}\n${USAGE}`);
    return 2;
  }
  const size: Size = values.tiny ? "tiny" : values.quick ? "quick" : "full";
  const rounds = values.rounds === undefined ? undefined : Number(values.rounds);
  if (rounds !== undefined && !(Number.isInteger(rounds) && rounds >= 1)) {
    console.error(`--rounds must be a whole number ≥ 1\n${USAGE}`);
    return 2;
  }
  const chosen =
    positionals.length > 0 ? SCENARIOS.filter((s) => positionals.includes(s.name)) : SCENARIOS;
  const complete = size === "full" && chosen.length === SCENARIOS.length;
  const out = values.out ?? join(BENCH_DIR, complete ? "RESULTS.md" : join("results", "latest.md"));

  const started = nowMs();
  const log = (message: string): void =>
    console.error(`[${((nowMs() - started) / 1000).toFixed(1)}s] ${message}`);
  const postgres = await probePostgres();
  if (!postgres.ok) log(`Postgres skipped: ${postgres.reason}`);
  const env = await describeEnvironment(postgres);
  const tmpDir = mkdtempSync(join(tmpdir(), "rein-bench-"));
  const reports: ScenarioReport[] = [];
  try {
    for (const scenario of chosen) {
      log(`${scenario.name}: start`);
      const t0 = nowMs();
      const load = loadavg()[0] ?? 0;
      try {
        const output = await scenario.run({
          size,
          postgres,
          tmpDir,
          log,
          ...(rounds !== undefined ? { rounds } : {}),
        });
        reports.push({
          scenario,
          rows: output.rows,
          ...(output.facts ? { facts: output.facts } : {}),
          seconds: (nowMs() - t0) / 1000,
          load,
        });
      } catch (error) {
        // One failing scenario must not lose the others' results; the exit code still says so.
        log(
          `${scenario.name}: FAILED ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
        reports.push({
          scenario,
          rows: [],
          error: error instanceof Error ? error.message : String(error),
          seconds: (nowMs() - t0) / 1000,
          load,
        });
      }
    }
  } finally {
    rmSync(tmpDir, { recursive: true, force: true });
  }
  const flags = [
    ...(size === "full" ? [] : [`--${size}`]),
    ...(rounds !== undefined ? [`--rounds ${rounds}`] : []),
    ...positionals,
  ];
  const command = `npm run bench${flags.length > 0 ? ` -- ${flags.join(" ")}` : ""}`;
  const markdown = renderMarkdown(env, size, reports, command);
  writeText(out, markdown);
  const stamp = env.date.replace(/[:.]/g, "-");
  const jsonl = join(BENCH_DIR, "results", `${stamp}-${size}.jsonl`);
  writeText(jsonl, renderJsonLines(env, size, reports));
  console.log(markdown);
  log(`wrote ${out} and ${jsonl}`);
  return reports.some((r) => r.error) ? 1 : 0;
}

process.exitCode = await main();
