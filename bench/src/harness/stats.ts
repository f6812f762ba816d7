/**
 * Timing and summary statistics: a monotonic clock, warm-up plus repeated sampling, and the
 * median / p95 of a sample.
 */

/** Summary of a sample of measurements (same unit as the samples). */
export interface Stats {
  median: number;
  p95: number;
  mean: number;
  min: number;
  max: number;
  n: number;
}

/** Milliseconds since an arbitrary origin, from the monotonic high-resolution clock. */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** Runs `fn` once and returns how long it took, in milliseconds, with its result. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = nowMs();
  const value = await fn();
  return { ms: nowMs() - start, value };
}

/**
 * The q-quantile (0..1) of a sample by linear interpolation between closest ranks.
 *
 * @throws Error for an empty sample.
 */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) throw new Error("quantile of an empty sample");
  const sorted = [...samples].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (pos - lo);
}

/** Median, p95, mean, min, max and size of a sample. */
export function summarize(samples: readonly number[]): Stats {
  const sum = samples.reduce((acc, x) => acc + x, 0);
  return {
    median: quantile(samples, 0.5),
    p95: quantile(samples, 0.95),
    mean: sum / samples.length,
    min: Math.min(...samples),
    max: Math.max(...samples),
    n: samples.length,
  };
}

/** How many times to run a measured operation. */
export interface Repetitions {
  /** Unmeasured runs first, so the JIT and caches are warm. */
  warmup: number;
  /** Measured runs. */
  reps: number;
}

/**
 * Runs `fn(i)` `warmup` times unmeasured, then `reps` times measured, one at a time, and returns
 * the measured durations in milliseconds. `i` counts all calls, warm-up included, so each call can
 * use its own thread id.
 */
export async function sample(
  reps: Repetitions,
  fn: (i: number) => Promise<unknown>,
): Promise<number[]> {
  let i = 0;
  for (let w = 0; w < reps.warmup; w++) await fn(i++);
  const out: number[] = [];
  for (let r = 0; r < reps.reps; r++) {
    const start = nowMs();
    await fn(i++);
    out.push(nowMs() - start);
  }
  return out;
}
