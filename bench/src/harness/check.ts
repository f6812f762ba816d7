/**
 * Correctness checks inside scenarios: both systems must compute the same final state, or the
 * benchmark compares different work and must not report a number.
 */
import { isDeepStrictEqual, inspect } from "node:util";

/** Raised when the two systems disagree on a final state or a counter. */
export class BenchmarkMismatchError extends Error {
  constructor(
    readonly label: string,
    readonly rein: unknown,
    readonly peer: unknown,
  ) {
    super(
      `${label}: Rein and LangGraph.js disagree.\nRein: ${inspect(rein, { depth: 4 })}\nLangGraph.js: ${inspect(peer, { depth: 4 })}`,
    );
    this.name = "BenchmarkMismatchError";
  }
}

/**
 * Throws {@link BenchmarkMismatchError} unless `rein` and `peer` are deeply equal.
 *
 * @throws BenchmarkMismatchError when they differ.
 */
export function assertSameState(label: string, rein: unknown, peer: unknown): void {
  if (!isDeepStrictEqual(rein, peer)) throw new BenchmarkMismatchError(label, rein, peer);
}

/**
 * Throws unless `actual` equals `expected` (a counter the scenario can predict exactly).
 *
 * @throws Error naming the counter when it differs.
 */
export function assertCount(label: string, actual: number, expected: number): void {
  if (actual !== expected) throw new Error(`${label}: expected ${expected}, got ${actual}`);
}
