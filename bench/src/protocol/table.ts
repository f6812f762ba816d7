/**
 * The protocol comparison's side-by-side table: one column per system, then Rein ÷ LangGraph
 * for each store pairing (Rein SQLite ÷ `langgraph dev`, Rein Postgres ÷ LangGraph on Postgres).
 */
import { formatNumber } from "../harness/report.ts";
import type { GraphName } from "./client.ts";
import type { GraphFigures, PhaseFigures } from "./measure.ts";
import { SYSTEMS, type SystemName } from "./servers.ts";

/** What one system gave: figures per graph, or why it was not measured. */
export type SystemResult =
  { ok: true; graphs: Record<GraphName, GraphFigures> } | { ok: false; reason: string };

const HEADERS: Record<SystemName, string> = {
  "langgraph-dev": "LangGraph `langgraph dev` (memory)",
  "langgraph-postgres": "LangGraph embed (Postgres)",
  "rein-sqlite": "Rein `/langgraph` (SQLite)",
  "rein-postgres": "Rein `/langgraph` (Postgres)",
};

interface Row {
  label: string;
  value: (g: GraphFigures) => number | null;
}

const phaseRows = (name: string, pick: (g: GraphFigures) => PhaseFigures): Row[] => [
  { label: `${name}: operations per second`, value: (g) => pick(g).perSecond },
  { label: `${name}: latency p50 (ms)`, value: (g) => pick(g).p50 },
  { label: `${name}: latency p99 (ms)`, value: (g) => pick(g).p99 },
  { label: `${name}: CPU per operation, server (ms)`, value: (g) => pick(g).serverCpuMs },
  {
    label: `${name}: CPU per operation, Postgres backends (ms)`,
    value: (g) => pick(g).backendCpuMs,
  },
  {
    label: `${name}: CPU per operation, server + backends (ms)`,
    value: (g) => pick(g).serverCpuMs + pick(g).backendCpuMs,
  },
  { label: `${name}: CPU per operation, bench clients (ms)`, value: (g) => pick(g).clientCpuMs },
];

const ROWS: Row[] = [
  ...phaseRows("start→paused", (g) => g.start),
  ...phaseRows("resume→done", (g) => g.resume),
  {
    label: "asking-node executions per answer (K threads, one answer at a time)",
    value: (g) => g.executions.perAnswer,
  },
];

/** Rein ÷ LangGraph, or "–" when either side is missing or zero. */
function ratio(rein: number | null, peer: number | null): string {
  if (rein === null || peer === null || peer === 0) return "–";
  return `${formatNumber(rein / peer)}×`;
}

/** Renders the table for every graph, with the ratio columns. */
export function renderTable(
  results: Record<SystemName, SystemResult>,
  graphs: readonly GraphName[],
): string {
  const lines: string[] = [];
  const valueOf = (system: SystemName, graph: GraphName, row: Row): number | null => {
    const r = results[system];
    return r.ok ? row.value(r.graphs[graph]) : null;
  };
  lines.push(
    `| | ${SYSTEMS.map((s) => HEADERS[s]).join(" | ")} | Rein SQLite ÷ dev | Rein Postgres ÷ LangGraph Postgres |`,
  );
  lines.push(`|---|${SYSTEMS.map(() => "---:").join("|")}|---:|---:|`);
  for (const graph of graphs) {
    lines.push(`| **${graph}** | ${SYSTEMS.map(() => "").join(" | ")} | | |`);
    for (const row of ROWS) {
      const cells = SYSTEMS.map((s) => {
        const v = valueOf(s, graph, row);
        return v === null ? "–" : formatNumber(v);
      });
      lines.push(
        `| ${row.label} | ${cells.join(" | ")} | ${ratio(valueOf("rein-sqlite", graph, row), valueOf("langgraph-dev", graph, row))} | ${ratio(valueOf("rein-postgres", graph, row), valueOf("langgraph-postgres", graph, row))} |`,
      );
    }
  }
  const notes = SYSTEMS.flatMap((s) => {
    const r = results[s];
    return r.ok ? [] : [`- ${HEADERS[s]}: not measured — ${r.reason}`];
  });
  return [...lines, ...(notes.length ? ["", ...notes] : [])].join("\n");
}
