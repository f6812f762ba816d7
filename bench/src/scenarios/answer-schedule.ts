/**
 * In which groups K pending interrupts are answered. One at a time is the scenario; for large K
 * the peer's quadratic cost makes that take many minutes, so a windowed schedule answers single
 * interrupts (measured) in three windows — at the start, the middle and the end — and the rest in
 * two unmeasured batches. Both systems follow the same schedule.
 */

/** A group of items answered by one command. */
export interface AnswerGroup {
  items: number[];
  /** Whether this command's duration is a per-answer sample. */
  measured: boolean;
}

/** The order in which the person answers: a fixed shuffle, so neither system gets a lucky order. */
export function answerOrder(k: number): number[] {
  const order = Array.from({ length: k }, (_, i) => i);
  let seed = 12345;
  for (let i = k - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const j = seed % (i + 1);
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  return order;
}

/**
 * The answer groups for K interrupts: all single and measured when `window` is null; otherwise
 * `window` singles at the start, middle and end, and two batches between them.
 */
export function answerSchedule(k: number, window: number | null): AnswerGroup[] {
  const order = answerOrder(k);
  if (window === null || 3 * window >= k) return order.map((i) => ({ items: [i], measured: true }));
  const singles = (from: number): AnswerGroup[] =>
    order.slice(from, from + window).map((i) => ({ items: [i], measured: true }));
  const mid = Math.floor((k - window) / 2);
  const end = k - window;
  return [
    ...singles(0),
    { items: order.slice(window, mid), measured: false },
    ...singles(mid),
    { items: order.slice(mid + window, end), measured: false },
    ...singles(end),
  ].filter((g) => g.items.length > 0);
}

/** Interrupts still pending before each group: K, then K minus what earlier groups answered. */
export function pendingBefore(k: number, groups: readonly AnswerGroup[]): number[] {
  let pending = k;
  return groups.map((g) => {
    const before = pending;
    pending -= g.items.length;
    return before;
  });
}

/**
 * Node bodies the peer runs for a schedule: K to pause, then each command re-runs every task still
 * paused in the step (answered ones finish, the others pause again).
 */
export function expectedPeerBodies(k: number, groups: readonly AnswerGroup[]): number {
  return k + pendingBefore(k, groups).reduce((a, b) => a + b, 0);
}

/** Node bodies Rein runs for any schedule: K to pause, then only the answered tasks: 2K. */
export function expectedReinBodies(k: number): number {
  return 2 * k;
}

/**
 * Least-squares line `ms = a + b * pending` through the measured samples, summed over a full
 * one-at-a-time sequence (pending = K, K-1, ..., 1): the estimated total of K single answers.
 */
export function estimateSequentialTotal(
  k: number,
  samples: readonly { pending: number; ms: number }[],
): number {
  const n = samples.length;
  const mx = samples.reduce((s, p) => s + p.pending, 0) / n;
  const my = samples.reduce((s, p) => s + p.ms, 0) / n;
  const sxx = samples.reduce((s, p) => s + (p.pending - mx) ** 2, 0);
  const sxy = samples.reduce((s, p) => s + (p.pending - mx) * (p.ms - my), 0);
  const b = sxx === 0 ? 0 : sxy / sxx;
  const a = my - b * mx;
  return k * a + (b * k * (k + 1)) / 2;
}
