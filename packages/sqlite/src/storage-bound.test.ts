/**
 * SPEC §6: bytes per step must not grow with history. A thread appends a 1 KB message per step
 * for 300 steps; what the store holds is measured from outside (the byte length of every stored
 * value in every table), per 100 steps.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { END, RunConfig, START, StateGraph, append, lastValue } from "@rein/core";
import { openDatabase } from "./driver.ts";
import { SqliteSaver } from "./saver.ts";

const MESSAGE_BYTES = 1000;
const STEPS_PER_ROUND = 100;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "rein-bound-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The byte length of every value in every table of the file. */
function logicalBytes(path: string): number {
  const db = openDatabase(path, { readOnly: true });
  try {
    let total = 0;
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all() as { name: string }[];
    for (const { name } of tables) {
      const columns = db.prepare(`PRAGMA table_info("${name}")`).all() as { name: string }[];
      const sum = columns.map((c) => `coalesce(length(CAST("${c.name}" AS BLOB)), 0)`).join(" + ");
      total += (
        db.prepare(`SELECT coalesce(sum(${sum}), 0) AS n FROM "${name}"`).get() as {
          n: number;
        }
      ).n;
    }
    return total;
  } finally {
    db.close();
  }
}

it("bytes stored per step stay flat over 300 appends: the total stays within 3× the payload", async () => {
  const path = join(dir, "bound.db");
  const saver = new SqliteSaver({ path });
  const graph = new StateGraph({
    target: lastValue<number>(() => 0),
    n: lastValue<number>(() => 0),
    log: append<string>(),
  })
    .addNode("step", (s) => ({ n: s.n + 1, log: `${s.n}:`.padEnd(MESSAGE_BYTES, "x") }))
    .addEdge(START, "step")
    .addConditionalEdges("step", (s) => (s.n < s.target ? "step" : END), ["step", END])
    .compile({ checkpointer: saver, recursionLimit: 10 * STEPS_PER_ROUND });
  const thread = RunConfig.thread("long");
  const added: number[] = [];
  let before = logicalBytes(path);
  try {
    for (let round = 1; round <= 3; round++) {
      const result = await graph.invoke({ target: round * STEPS_PER_ROUND }, thread);
      expect(result.values.log).toHaveLength(round * STEPS_PER_ROUND);
      const now = logicalBytes(path);
      added.push(now - before);
      before = now;
    }
  } finally {
    await saver.close();
  }
  // Snapshots grow geometrically (SNAPSHOT_FACTOR 3): all of them together stay within
  // (2 + 1/3)× the payload, and each checkpoint row adds a few hundred bytes of its own. So after
  // every round the total stays under 3× the payload so far. A store that rewrote the history on
  // each step would hold ~150× the payload after 300 steps.
  let total = 0;
  added.forEach((bytes, i) => {
    total += bytes;
    const payload = (i + 1) * STEPS_PER_ROUND * MESSAGE_BYTES;
    expect(total, `bytes added per round: ${added.join(", ")}`).toBeLessThan(3 * payload);
  });
});
