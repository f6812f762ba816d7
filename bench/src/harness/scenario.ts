/**
 * The contract every scenario module implements, and the context the runner hands it.
 */
import type { PostgresTarget } from "./postgres.ts";
import type { ResultRow } from "./result.ts";

/**
 * How big a run is: `full` for `npm run bench` (minutes), `quick` for `--quick` (seconds), `tiny`
 * for the correctness tests (as small as still exercises every code path).
 */
export type Size = "full" | "quick" | "tiny";

/** What the runner gives a scenario. */
export interface ScenarioContext {
  size: Size;
  /** Where Postgres runs, or why it is skipped. */
  postgres: PostgresTarget;
  /** A scratch directory for SQLite files; the runner removes it afterwards. */
  tmpDir: string;
  /** Progress output (stderr in the CLI, silent in tests). */
  log: (message: string) => void;
  /**
   * Rounds of the scenarios that repeat their measurement (the order of the systems reversed
   * every other round); {@link roundsOf} gives the default for the size.
   */
  rounds?: number;
}

/** Rounds to run: `ctx.rounds`, else 3 for a full run and 1 otherwise. */
export function roundsOf(ctx: Pick<ScenarioContext, "size" | "rounds">): number {
  return ctx.rounds ?? (ctx.size === "full" ? 3 : 1);
}

/**
 * The final state of one variant on both systems, with the counters the scenario recorded.
 * The scenario has already thrown if the states differ; tests assert it again and check counters.
 */
export interface VariantCheck {
  variant: string;
  rein: unknown;
  peer: unknown;
  /** Named counters, e.g. `{ reinBodies: 20, peerBodies: 65 }`. */
  counters: Record<string, number>;
}

/** What a scenario returns: the table rows and the checks behind them. */
export interface ScenarioOutput {
  rows: ResultRow[];
  checks: VariantCheck[];
  /**
   * Measured values that are not table rows (a cause behind a row, a size the targets compare
   * with), by name; `targets.ts` reads them.
   */
  facts?: Record<string, number>;
}

/** One benchmark scenario, run on Rein and LangGraph.js side by side. */
export interface Scenario {
  /** CLI name, e.g. `"superstep"` (`npm run bench -- superstep`). */
  name: string;
  /** Heading in RESULTS.md. */
  title: string;
  /** One paragraph for RESULTS.md: what is run and how it is measured. */
  description: string;
  run(ctx: ScenarioContext): Promise<ScenarioOutput>;
}

/** Picks the parameter for the context's size. */
export function bySize<T>(ctx: Pick<ScenarioContext, "size">, table: Record<Size, T>): T {
  return table[ctx.size];
}
