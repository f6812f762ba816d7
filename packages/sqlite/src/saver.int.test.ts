/**
 * The SQLite store across processes: durability of a commit when the process is killed, one
 * file shared by several writers, and concurrent first opens.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkpointId, makeCheckpoint, makeCommit, threadId } from "@rein/core/testing";
import { startChild } from "./int/processes.ts";
import { SCHEMA_VERSION } from "./migrations.ts";
import { SqliteSaver } from "./saver.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "rein-sqlite-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("SqliteSaver across processes", () => {
  it("a committed step survives SIGKILL of the process that wrote it", async () => {
    const path = join(dir, "rein.db");
    const child = startChild("commit-and-die", path, "5");
    expect(await child.nextLine()).toBe(`committed ${checkpointId(5)}`);
    expect((await child.exited).signal).toBe("SIGKILL");

    const saver = new SqliteSaver({ path });
    try {
      const head = await saver.getCheckpoint(threadId("t1"), "");
      expect(head?.id).toBe(checkpointId(5));
      expect(await saver.getChannelValues(threadId("t1"), "", head?.versions ?? {})).toEqual({
        log: [1, 2, 3, 4, 5],
      });
    } finally {
      await saver.close();
    }
  });

  it("two processes committing on the same head: exactly one wins", async () => {
    const path = join(dir, "rein.db");
    const setup = new SqliteSaver({ path });
    await setup.commitStep(makeCommit(makeCheckpoint("t1", checkpointId(1)), null));
    await setup.close();

    const racers = [startChild("race", path, "2"), startChild("race", path, "3")];
    for (const racer of racers) expect(await racer.nextLine()).toBe("ready");
    for (const racer of racers) racer.process.stdin.end("go\n");
    const outcomes = (await Promise.all(racers.map((r) => r.nextLine()))).sort();
    expect(outcomes).toEqual(["conflict", "ok"]);
    await Promise.all(racers.map((r) => r.exited));

    const saver = new SqliteSaver({ path });
    try {
      const checkpoints = await saver.listCheckpoints(threadId("t1"), "");
      expect(checkpoints).toHaveLength(2);
      expect((await saver.getCheckpoint(threadId("t1"), ""))?.id).toBe(checkpoints[0]?.id);
    } finally {
      await saver.close();
    }
  });

  it("several processes opening a fresh file at once all see the newest schema", async () => {
    const path = join(dir, "rein.db");
    const openers = Array.from({ length: 4 }, () => startChild("open", path));
    const lines = await Promise.all(openers.map((o) => o.nextLine()));
    expect(lines).toEqual(Array.from({ length: 4 }, () => `version ${SCHEMA_VERSION}`));
    const exits = await Promise.all(openers.map((o) => o.exited));
    expect(exits.map((e) => e.code)).toEqual([0, 0, 0, 0]);
  });
});
