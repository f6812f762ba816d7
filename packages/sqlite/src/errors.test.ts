import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCodes, StoreUnavailableError } from "@rein/core";
import { makeRun, runId, threadId } from "@rein/core/testing";
import { SqliteSaver } from "./saver.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("SqliteSaver driver failures", () => {
  it("a write that finds the file locked past the busy timeout is a retryable StoreUnavailableError and writes nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rein-sqlite-errors-"));
    dirs.push(dir);
    const path = join(dir, "rein.db");
    const holder = new SqliteSaver({ path });
    const writer = new SqliteSaver({ path, busyTimeoutMs: 0 });
    holder.db.exec("BEGIN IMMEDIATE");
    try {
      const error: unknown = await writer.putRun(makeRun("t1", "run-1")).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as StoreUnavailableError).code).toBe(ErrorCodes.STORE_UNAVAILABLE);
      expect((error as StoreUnavailableError).retryable).toBe(true);
      expect((error as StoreUnavailableError).details).toMatchObject({ driverCode: "SQLITE_BUSY" });
    } finally {
      holder.db.exec("ROLLBACK");
    }
    expect(await writer.getRun(runId("run-1"))).toBeUndefined();
    expect(await writer.listRuns(threadId("t1"))).toEqual([]);
    await holder.close();
    await writer.close();
  });

  it("a call on a closed store is a typed, non-retryable StoreUnavailableError", async () => {
    const saver = new SqliteSaver({ path: ":memory:" });
    await saver.close();
    const error: unknown = await saver.getRun(runId("r")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).retryable).toBe(false);
  });
});
