/**
 * What a scenario measures: rows of the results table, one cell per system, and the ratio
 * peer/Rein.
 */
import type { Stats } from "./stats.ts";

/** Unit of a measured value. */
export type Unit = "µs" | "ms" | "s" | "bytes" | "count";

/**
 * One system's result in one row. `timing` and `value` are numbers where lower is better;
 * `skipped` means the measurement could not run here (e.g. no Postgres); `unsupported` means the
 * system has no way to express the operation.
 */
export type Cell =
  | { kind: "timing"; unit: Unit; stats: Stats }
  | { kind: "value"; unit: Unit; value: number; estimated?: boolean }
  | { kind: "skipped"; reason: string }
  | { kind: "unsupported"; note: string };

/** One row of the results table: a metric of a scenario variant, measured on both systems. */
export interface ResultRow {
  /** Scenario name, e.g. `"superstep"`. */
  scenario: string;
  /** Variant within the scenario, e.g. `"memory"`, `"sqlite"`, `"K=100"`. */
  variant: string;
  /** What is measured, e.g. `"per superstep"`. */
  metric: string;
  rein: Cell;
  peer: Cell;
  /** Caveat shown beside the row (e.g. what the peer's closest equivalent is). */
  note?: string;
  /**
   * The floor: the least work that stores the same number of checkpoints, one commit each, on
   * the same store (see `floor.ts`). Rein ÷ floor says how far Rein is above it.
   */
  floor?: Cell;
  /**
   * `"feature"` when the two sides do different work because the peer lacks the feature (e.g. an
   * indexed query against the scan the peer is forced into): the ratio measures the feature, not
   * the speed of the same work.
   */
  comparison?: "feature";
}

/** A timing cell from a summary of samples. */
export function timing(unit: Unit, stats: Stats): Cell {
  return { kind: "timing", unit, stats };
}

/** A single-value cell (a size or a count). */
export function value(unit: Unit, v: number): Cell {
  return { kind: "value", unit, value: v };
}

/** A value computed from a model of measured samples rather than measured whole (shown with ≈). */
export function estimate(unit: Unit, v: number): Cell {
  return { kind: "value", unit, value: v, estimated: true };
}

/** A cell for a measurement that could not run here. */
export function skipped(reason: string): Cell {
  return { kind: "skipped", reason };
}

/** A cell for an operation the system cannot express. */
export function unsupported(note: string): Cell {
  return { kind: "unsupported", note };
}

/** The headline number of a cell (median for timings), or `null` when there is none. */
export function headline(cell: Cell): number | null {
  if (cell.kind === "timing") return cell.stats.median;
  if (cell.kind === "value") return cell.value;
  return null;
}

/**
 * peer / Rein of the headline numbers: above 1 means Rein is faster or smaller. `null` when
 * either side has no number or Rein's is zero.
 */
export function ratio(row: ResultRow): number | null {
  const r = headline(row.rein);
  const p = headline(row.peer);
  if (r === null || p === null || r === 0) return null;
  return p / r;
}

/** Rein / floor of the headline numbers, or `null` when either has no number. */
export function floorRatio(row: ResultRow): number | null {
  if (!row.floor) return null;
  const r = headline(row.rein);
  const f = headline(row.floor);
  if (r === null || f === null || f === 0) return null;
  return r / f;
}
