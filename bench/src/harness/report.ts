/**
 * Turns measured rows into RESULTS.md (one table per scenario, both systems side by side with the
 * ratio) and into raw JSON lines.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Environment } from "./env.ts";
import { floorRatio, ratio, type Cell, type ResultRow } from "./result.ts";
import type { Scenario, Size } from "./scenario.ts";
import { SIZE_METHOD } from "./sizes.ts";
import { checkTargets, targetsSection, viewOf } from "./targets.ts";

/** The output of one scenario within a run, or the error that stopped it. */
export interface ScenarioReport {
  scenario: Scenario;
  rows: ResultRow[];
  /** The scenario's measured facts (`ScenarioOutput.facts`). */
  facts?: Record<string, number>;
  error?: string;
  seconds: number;
  /** 1-minute load average when the scenario started. */
  load?: number;
}

/** Formats a number with precision that suits its magnitude, with thousands separators. */
export function formatNumber(n: number): string {
  const abs = Math.abs(n);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return n.toLocaleString("en-US", { minimumFractionDigits: 0, maximumFractionDigits: digits });
}

const escapeCell = (text: string): string => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** One table cell: `median (p95 x)` for timings, the value for sizes and counts. */
export function formatCell(cell: Cell): string {
  switch (cell.kind) {
    case "timing":
      return `${formatNumber(cell.stats.median)} ${cell.unit} (p95 ${formatNumber(cell.stats.p95)})`;
    case "value":
      return `${cell.estimated ? "≈ " : ""}${formatNumber(cell.value)}${cell.unit === "count" ? "" : ` ${cell.unit}`}`;
    case "skipped":
      return escapeCell(`skipped: ${cell.reason}`);
    case "unsupported":
      return escapeCell(`not expressible: ${cell.note}`);
  }
}

const times = (r: number): string =>
  `${r >= 100 ? r.toFixed(0) : r >= 10 ? r.toFixed(1) : r.toFixed(2)}×`;

/**
 * The ratio column: `12.3×`, or `—` when either side has no number; a feature comparison says so
 * beside its ratio.
 */
export function formatRatio(row: ResultRow): string {
  const r = ratio(row);
  if (r === null) return "—";
  return row.comparison === "feature" ? `${times(r)} (feature comparison)` : times(r);
}

/** The Rein ÷ floor column: `2.1×`, or `—`. */
export function formatFloorRatio(row: ResultRow): string {
  const r = floorRatio(row);
  return r === null ? "—" : times(r);
}

function scenarioSection(report: ScenarioReport): string {
  const { scenario, rows } = report;
  const lines = [`## ${scenario.title}`, "", scenario.description, ""];
  if (report.error) lines.push(`**Failed:** ${escapeCell(report.error)}`, "");
  if (rows.length > 0) {
    // Sections with a floor get two more columns: the floor and Rein ÷ floor.
    const floors = rows.some((r) => r.floor);
    lines.push(
      `| Variant | Metric | Rein | LangGraph.js | LangGraph.js / Rein |${floors ? " Floor | Rein ÷ floor |" : ""}`,
      `| --- | --- | ---: | ---: | ---: |${floors ? " ---: | ---: |" : ""}`,
    );
    for (const row of rows)
      lines.push(
        `| ${row.variant} | ${escapeCell(row.metric)} | ${formatCell(row.rein)} | ${formatCell(row.peer)} | ${formatRatio(row)} |` +
          (floors
            ? ` ${row.floor ? formatCell(row.floor) : "—"} | ${formatFloorRatio(row)} |`
            : ""),
      );
    const notes = rows.filter((r) => r.note);
    if (notes.length > 0)
      lines.push("", ...notes.map((r) => `- ${r.variant}, ${r.metric}: ${r.note}`));
  }
  lines.push(
    "",
    `_${report.seconds.toFixed(1)} s for this scenario${report.load === undefined ? "" : `; 1-min load average ${report.load.toFixed(2)} at its start`}._`,
    "",
  );
  return lines.join("\n");
}

function notAhead(reports: ScenarioReport[]): string[] {
  const rows = reports
    .flatMap((r) => r.rows)
    .filter((row) => {
      const x = ratio(row);
      return x !== null && x <= 1;
    });
  if (rows.length === 0)
    return ["Rein is ahead (ratio above 1) in every row that has numbers on both sides.", ""];
  return [
    "Rows where Rein is **not** ahead (ratio ≤ 1):",
    "",
    ...rows.map((row) => `- ${row.scenario} / ${row.variant} / ${row.metric}: ${formatRatio(row)}`),
    "",
  ];
}

function floorSummary(reports: ScenarioReport[]): string[] {
  const rows = reports.flatMap((r) => r.rows).filter((row) => floorRatio(row) !== null);
  if (rows.length === 0) return [];
  return [
    "Rein ÷ floor (the same number of checkpoints, one small commit each; 1× is the floor):",
    "",
    ...rows.map(
      (row) =>
        `- ${row.scenario} / ${row.variant} / ${row.metric}: ${formatFloorRatio(row)} (Rein ${formatCell(row.rein)}, floor ${formatCell(row.floor as Cell)})`,
    ),
    "",
  ];
}

/** The whole RESULTS.md text. */
export function renderMarkdown(
  env: Environment,
  size: Size,
  reports: ScenarioReport[],
  command: string,
): string {
  const pkg = (name: string): string => env.packages[name] ?? "?";
  return [
    "# Rein vs LangGraph.js — benchmark results",
    "",
    `Generated by \`${command}\` on ${env.date} (size: ${size}). Each scenario runs both systems in one process, one after the other, after a warm-up.`,
    "",
    "## Environment",
    "",
    "| | |",
    "| --- | --- |",
    `| Machine | ${env.machine}, ${env.cpus}, ${env.memory} RAM, load average ${env.load} at start |`,
    `| Node | ${env.node} |`,
    `| Rein | @rein/core ${pkg("@rein/core")}, @rein/sqlite ${pkg("@rein/sqlite")}, @rein/postgres ${pkg("@rein/postgres")} at commit ${env.reinCommit} |`,
    `| LangGraph.js | @langchain/langgraph ${pkg("@langchain/langgraph")}, langgraph-checkpoint ${pkg("@langchain/langgraph-checkpoint")}, checkpoint-sqlite ${pkg("@langchain/langgraph-checkpoint-sqlite")}, checkpoint-postgres ${pkg("@langchain/langgraph-checkpoint-postgres")}, @langchain/core ${pkg("@langchain/core")} |`,
    `| Drivers | Rein: node:sqlite (${env.sqlite}); LangGraph.js: better-sqlite3 ${pkg("better-sqlite3")} (its own SQLite); both: pg ${pkg("pg")} |`,
    `| Postgres | ${env.postgres} |`,
    "",
    "## How to read",
    "",
    "- Timings are `median (p95 …)` over the repetitions named in the metric; sizes and counts are single values.",
    "- **LangGraph.js / Rein** divides the peer's median (or value) by Rein's: above 1 means Rein is faster or smaller, below 1 means LangGraph.js is.",
    "- **Floor** (where a table has one) is the least work that stores what Rein stores: the same number of checkpoints as Rein commits, each one small write committed on its own (in memory: a minimal superstep loop that serializes each checkpoint into a map; SQLite: one autocommit INSERT on a WAL file with `synchronous=NORMAL`; Postgres: one autocommit INSERT, one round trip and one commit each, on a fresh database). **Rein ÷ floor** is how many times the floor Rein takes: 1× would be a runtime that costs nothing beyond its commits.",
    "- `(feature comparison)` beside a ratio: the two systems do different work because the peer lacks the feature (e.g. Rein's indexed approval-queue query against the scan of every checkpoint the peer is forced into); the ratio measures what the feature saves, not the speed of the same work.",
    "- Rows measured over several rounds (the order of the systems reversed every other round) pool the samples of all rounds; the note under the table gives each round's median, the spread of the ratio and the load average when each round started.",
    "- `≈` marks a value computed from a model of measured samples rather than measured whole; the note under the table says how.",
    "- `skipped: …` means the measurement could not run on this machine; `not expressible: …` means the system has no way to do it.",
    "- Both systems run with their documented defaults, except that both SQLite files use WAL with `synchronous=NORMAL` (Rein's default; the LangGraph.js saver enables WAL but leaves SQLite's default `FULL`).",
    "- Every scenario checks that both systems computed the same final state and throws otherwise; `bench/src/scenarios.test.ts` checks it again with exact node-body counters.",
    `- Storage: ${SIZE_METHOD}`,
    "",
    ...targetsSection(reports),
    ...notAhead(reports),
    ...floorSummary(reports),
    ...reports.map(scenarioSection),
  ].join("\n");
}

/** Writes a text file, creating its directory. */
export function writeText(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/**
 * Raw results as JSON lines: one `env` line, one line per row with its ratio, the facts of each
 * scenario that has some, then one line per target as checked against this run.
 */
export function renderJsonLines(env: Environment, size: Size, reports: ScenarioReport[]): string {
  const lines: unknown[] = [{ type: "env", size, ...env }];
  for (const report of reports) {
    if (report.error)
      lines.push({ type: "error", scenario: report.scenario.name, error: report.error });
    for (const row of report.rows)
      lines.push({ type: "row", ...row, ratio: ratio(row), floorRatio: floorRatio(row) });
    if (report.facts)
      lines.push({ type: "facts", scenario: report.scenario.name, facts: report.facts });
  }
  for (const target of checkTargets(viewOf(reports))) lines.push({ type: "target", ...target });
  return lines.map((l) => JSON.stringify(l)).join("\n") + "\n";
}
