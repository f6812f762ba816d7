import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probePostgres, type PostgresTarget } from "./harness/postgres.ts";
import type { ScenarioContext, ScenarioOutput, VariantCheck } from "./harness/scenario.ts";
import { parallelInterrupts } from "./scenarios/parallel-interrupts.ts";
import { pausedThreads } from "./scenarios/paused-threads.ts";
import { pauseResume, roundOrder } from "./scenarios/pause-resume.ts";
import { meanPerStep, message, storageGrowth } from "./scenarios/storage-growth.ts";
import { CHAIN_LENGTH, superstep } from "./scenarios/superstep.ts";
import { targetedResume } from "./scenarios/targeted-resume.ts";

// Every scenario in its tiny configuration: the two systems must agree on the final state, and
// the counters must be exactly what the scenario predicts. No timing is asserted.

let tmpDir: string;
let postgres: PostgresTarget;

beforeAll(async () => {
  tmpDir = mkdtempSync(join(tmpdir(), "rein-bench-test-"));
  postgres = await probePostgres();
});

afterAll(() => rmSync(tmpDir, { recursive: true, force: true }));

const ctx = (): ScenarioContext => ({ size: "tiny", postgres, tmpDir, log: () => undefined });

function check(out: ScenarioOutput, variant: string): VariantCheck {
  const found = out.checks.find((c) => c.variant === variant);
  if (!found)
    throw new Error(
      `no check for variant ${variant}; have ${out.checks.map((c) => c.variant).join(", ")}`,
    );
  return found;
}

const pgVariant = (): string[] => (postgres.ok ? ["postgres"] : []);

describe("superstep", () => {
  it("both systems count to the chain length, with and without a checkpointer", async () => {
    const out = await superstep.run(ctx());
    for (const variant of ["MemorySaver", "no checkpointer"]) {
      const c = check(out, variant);
      expect(c.rein).toEqual({ n: CHAIN_LENGTH });
      expect(c.peer).toEqual(c.rein);
      // The floor loop serialized exactly as many checkpoints per run as Rein committed.
      expect(c.counters["floorCommitsPerRun"]).toBe(c.counters["reinCommitsPerRun"]);
    }
    expect(check(out, "MemorySaver").counters["reinCommitsPerRun"]).toBeGreaterThanOrEqual(
      CHAIN_LENGTH,
    );
    expect(check(out, "no checkpointer").counters["floorCommitsPerRun"]).toBe(0);
    expect(out.rows).toHaveLength(2);
    for (const row of out.rows) expect(row.floor?.kind).toBe("timing");
  });
});

describe("pause-resume", () => {
  it("both systems pause, take the answer and finish with the same state on every store", async () => {
    const out = await pauseResume.run({ ...ctx(), rounds: 2 });
    for (const c of out.checks) {
      expect(c.rein).toEqual({ n: 2, answer: "yes" });
      expect(c.peer).toEqual(c.rein);
      expect(c.counters["rounds"]).toBe(2);
      // The floor committed as many checkpoints per round trip as Rein did.
      const { reinPauseCommits, reinResumeCommits, floorCommitsPerThread } = c.counters;
      expect(reinPauseCommits).toBeGreaterThan(0);
      expect(reinResumeCommits).toBeGreaterThan(0);
      expect(floorCommitsPerThread).toBe((reinPauseCommits ?? 0) + (reinResumeCommits ?? 0));
    }
    expect(out.checks.map((c) => c.variant)).toEqual(expect.arrayContaining(["memory", "sqlite"]));
    expect(out.rows).toHaveLength(9);
    // Two rounds: each measured row pools both and names each round in its note.
    for (const row of out.rows.filter((r) => r.rein.kind === "timing")) {
      expect(row.floor?.kind).toBe("timing");
      expect(row.note).toMatch(/2 rounds \(order reversed every other round\)/);
    }
  });
});

describe("rounds", () => {
  it("reverse the order of the systems every other round", () => {
    expect(roundOrder(0)).toEqual(["rein", "peer", "floor"]);
    expect(roundOrder(1)).toEqual(["floor", "peer", "rein"]);
    expect(roundOrder(2)).toEqual(roundOrder(0));
  });
});

describe("parallel-interrupts", () => {
  // K → [Rein bodies, LangGraph.js bodies]. One at a time: Rein 2K; LangGraph.js K + K(K+1)/2.
  // K = 12 follows the windowed schedule (2 singles, batch of 3, 2 singles, batch of 3, 2 singles):
  // LangGraph.js re-runs the tasks still paused before each command: 12+11+10+7+6+5+2+1 = 54.
  const expected: Record<number, [number, number]> = {
    1: [2, 2],
    3: [6, 9],
    7: [14, 35],
    12: [24, 66],
  };

  it("answering one interrupt re-runs only its task on Rein and every paused sibling on LangGraph.js", async () => {
    const out = await parallelInterrupts.run(ctx());
    for (const [k, [reinBodies, peerBodies]] of Object.entries(expected)) {
      const c = check(out, `K=${k}`);
      expect(c.peer).toEqual(c.rein);
      expect(c.rein).toEqual({
        items: Array.from({ length: Number(k) }, (_, i) => i),
        out: Array.from({ length: Number(k) }, (_, i) => i * 10),
      });
      expect(c.counters).toMatchObject({ reinBodies, peerBodies, reinReruns: Number(k) });
    }
  });
});

describe("targeted-resume", () => {
  it("a targeted answer runs one sub-agent on Rein and every paused sibling sub-agent on LangGraph.js", async () => {
    const out = await targetedResume.run(ctx());
    // Tiny: fleets of 3 and 11 sub-agents, 2 single answers each. LangGraph.js re-runs every
    // still-paused sub-agent on each answer: 3 + 2 = 5 and 11 + 10 = 21.
    for (const [n, peerReruns] of [
      [3, 5],
      [11, 21],
    ] as const) {
      const c = check(out, `${n - 1} paused siblings`);
      expect(c.rein).toEqual(Array.from({ length: n }, (_, i) => i * 10 + 1));
      expect(c.peer).toEqual(c.rein);
      expect(c.counters).toEqual({ reinReruns: 2, peerReruns, answers: 2 });
    }
  });
});

describe("storage-growth", () => {
  it("both systems store the same conversation, with the reducer and with the peer's DeltaChannel", async () => {
    const out = await storageGrowth.run(ctx());
    const expectedConversation = Array.from({ length: 12 }, (_, i) => message(i + 1));
    for (const variant of ["sqlite", "sqlite, LangGraph.js DeltaChannel (beta)"]) {
      const c = check(out, variant);
      expect(c.rein).toEqual(expectedConversation);
      expect(c.peer).toEqual(c.rein);
    }
    expect(message(1)).toHaveLength(1024);
    expect(out.rows.filter((r) => r.variant.startsWith("sqlite"))).toHaveLength(12);
    // Per-checkpoint rows are means over ranges of steps, never one chosen step.
    const perCheckpoint = out.rows.filter((r) => r.metric.includes("per checkpoint"));
    expect(perCheckpoint.length).toBeGreaterThan(0);
    for (const row of perCheckpoint)
      expect(row.metric).toMatch(/^mean bytes per checkpoint, steps \d+–\d+$/);
  });

  it("the mean per checkpoint is the growth between two observations over the steps between", () => {
    const after = new Map([
      [0, 100],
      [6, 700],
      [12, 1900],
    ]);
    expect(meanPerStep(after, 0, 12)).toBe(150);
    expect(meanPerStep(after, 6, 12)).toBe(200);
  });
});

describe("paused-threads", () => {
  it("both systems list a full page of pending interrupts and resume the same threads to the same state", async () => {
    const out = await pausedThreads.run(ctx());
    for (const variant of ["sqlite", ...pgVariant()]) {
      const c = out.checks.find((x) => x.variant === variant);
      if (!c) continue; // Rein's Postgres saver may be missing: its cells are skipped
      expect(c.peer).toEqual(c.rein);
      expect(c.counters).toMatchObject({ threads: 60, reinPage: 50, peerPage: 50 });
    }
    expect(check(out, "sqlite").rein).toHaveLength(3);
    // The queue rows compare Rein's indexed query with the peer's forced scan: labelled so.
    const queueRows = out.rows.filter((r) => r.metric.includes("page"));
    expect(queueRows.length).toBeGreaterThan(0);
    for (const row of queueRows) expect(row.comparison).toBe("feature");
  });
});
