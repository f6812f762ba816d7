import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

describe("SqliteSaver opening a file that is not a sound database", () => {
  function fileWith(bytes: Buffer): string {
    const dir = mkdtempSync(join(tmpdir(), "rein-sqlite-corrupt-"));
    dirs.push(dir);
    const path = join(dir, "rein.db");
    writeFileSync(path, bytes);
    return path;
  }

  /** A store file with a few rows, cut to `keep` of its bytes. */
  async function truncatedStore(keep: number): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), "rein-sqlite-cut-"));
    dirs.push(dir);
    const path = join(dir, "rein.db");
    const saver = new SqliteSaver({ path });
    for (let i = 0; i < 50; i++) await saver.putRun(makeRun(`t${i}`, `run-${i}`));
    await saver.close();
    const bytes = readFileSync(path);
    writeFileSync(path, bytes.subarray(0, Math.floor(bytes.length * keep)));
    return path;
  }

  function openError(path: string): unknown {
    try {
      new SqliteSaver({ path }).db.close();
    } catch (error) {
      return error;
    }
    return undefined;
  }

  it("a file that is not SQLite is a typed, non-retryable error naming the file and what to do", () => {
    const path = fileWith(Buffer.from("this is not a database, only some text ".repeat(200)));
    const error = openError(path);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    const typed = error as StoreUnavailableError;
    expect(typed.code).toBe(ErrorCodes.STORE_UNAVAILABLE);
    expect(typed.retryable).toBe(false);
    expect(typed.details).toMatchObject({ driverCode: "SQLITE_NOTADB" });
    expect(typed.message).toContain(path);
    expect(typed.message).toMatch(/backup/);
  });

  it("a truncated store file is a typed, non-retryable error, not a raw driver error", async () => {
    const path = await truncatedStore(0.3);
    const error = openError(path);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    const typed = error as StoreUnavailableError;
    expect(typed.retryable).toBe(false);
    expect(typed.details).toMatchObject({ driverCode: "SQLITE_CORRUPT" });
    expect(typed.message).toContain(path);
    expect(typed.message).toMatch(/backup/);
  });
});
