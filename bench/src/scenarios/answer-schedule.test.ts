import { describe, expect, it } from "vitest";
import {
  answerOrder,
  answerSchedule,
  estimateSequentialTotal,
  expectedPeerBodies,
  pendingBefore,
} from "./answer-schedule.ts";

describe("answerSchedule", () => {
  it("answers every item exactly once, one at a time when there is no window", () => {
    const groups = answerSchedule(10, null);
    expect(groups).toHaveLength(10);
    expect(groups.every((g) => g.items.length === 1 && g.measured)).toBe(true);
    expect(groups.flatMap((g) => g.items).sort((a, b) => a - b)).toEqual(
      answerOrder(10).sort((a, b) => a - b),
    );
  });

  it("samples three windows of singles and answers the rest in two unmeasured batches", () => {
    const groups = answerSchedule(100, 5);
    expect(groups.filter((g) => g.measured)).toHaveLength(15);
    expect(groups.filter((g) => !g.measured).map((g) => g.items.length)).toEqual([42, 43]);
    expect(new Set(groups.flatMap((g) => g.items)).size).toBe(100);
    expect(pendingBefore(100, groups).slice(0, 6)).toEqual([100, 99, 98, 97, 96, 95]);
  });

  it("predicts the peer's node bodies: K + K(K+1)/2 one at a time", () => {
    expect(expectedPeerBodies(100, answerSchedule(100, null))).toBe(100 + 5050);
  });
});

describe("estimateSequentialTotal", () => {
  it("recovers the exact total from samples on a line", () => {
    const cost = (pending: number): number => 2 + 0.5 * pending;
    const samples = [100, 99, 50, 49, 2, 1].map((pending) => ({ pending, ms: cost(pending) }));
    let exact = 0;
    for (let p = 1; p <= 100; p++) exact += cost(p);
    expect(estimateSequentialTotal(100, samples)).toBeCloseTo(exact, 9);
  });
});
