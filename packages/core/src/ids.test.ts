import { describe, expect, it } from "vitest";
import { InvalidIdError } from "./errors.ts";
import {
  asCheckpointId,
  asInterruptId,
  asRunId,
  asTaskId,
  newCheckpointId,
  taskIdFor,
} from "./ids.ts";

describe("brand constructors", () => {
  it("brand the ids a caller passes back, unchanged", () => {
    expect(asRunId("r_1")).toBe("r_1");
    expect(asTaskId("t_1")).toBe("t_1");
    expect(asInterruptId("i_1")).toBe("i_1");
    expect(asCheckpointId("c1")).toBe("c1");
  });

  it("refuse a value that is not a string with a typed error naming the field", () => {
    const refused = (() => {
      try {
        asRunId(42);
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(InvalidIdError);
    expect((refused as InvalidIdError).details).toEqual({ field: "runId", rule: "type" });
    expect(() => asCheckpointId(null)).toThrow(InvalidIdError);
  });

  it("refuse an id with a NUL character, which no id Rein makes holds, on every store alike", () => {
    for (const [brand, field] of [
      [asRunId, "runId"],
      [asTaskId, "taskId"],
      [asInterruptId, "interruptId"],
      [asCheckpointId, "checkpointId"],
    ] as const) {
      let refused: unknown;
      try {
        brand("r_1\u0000");
      } catch (error) {
        refused = error;
      }
      expect(refused, field).toBeInstanceOf(InvalidIdError);
      expect((refused as InvalidIdError).details).toEqual({ field, rule: "nul" });
    }
  });
});

describe("taskIdFor", () => {
  type Inputs = Parameters<typeof taskIdFor>;
  const base: Inputs = ["thread-1", "run-1", ["parent"], 3, "review", "edge"];

  it("is deterministic: the same inputs give the same id, so a retried step finds its task", () => {
    expect(taskIdFor(...base)).toBe(taskIdFor(...base));
    expect(taskIdFor(...base)).toMatch(/^t_[\w-]{22}$/);
  });

  // One case per input: a task id that ignored any of them would let two different tasks share
  // an id, and with it their stored result and idempotency key.
  it.each<[string, Inputs]>([
    ["thread", ["thread-2", "run-1", ["parent"], 3, "review", "edge"]],
    ["run", ["thread-1", "run-2", ["parent"], 3, "review", "edge"]],
    ["namespace", ["thread-1", "run-1", ["parent", "child"], 3, "review", "edge"]],
    ["step", ["thread-1", "run-1", ["parent"], 4, "review", "edge"]],
    ["node", ["thread-1", "run-1", ["parent"], 3, "approve", "edge"]],
    ["trigger", ["thread-1", "run-1", ["parent"], 3, "review", "send:0"]],
  ])("changes when the %s changes", (_input, changed) => {
    expect(taskIdFor(...changed)).not.toBe(taskIdFor(...base));
  });

  it("does not confuse text moved from one input to the next", () => {
    expect(taskIdFor("ab", "c", [], 0, "n", "edge")).not.toBe(
      taskIdFor("a", "bc", [], 0, "n", "edge"),
    );
  });
});

describe("newCheckpointId", () => {
  it("gives time-ordered ids of twelve, six and six hex digits, each after the last", () => {
    const ids = Array.from({ length: 2000 }, () => newCheckpointId());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{12}-[0-9a-f]{6}-[0-9a-f]{6}$/);
    for (let i = 1; i < ids.length; i++)
      expect((ids[i] as string) > (ids[i - 1] as string)).toBe(true);
    expect(Number.parseInt(ids[0]?.slice(0, 12) ?? "", 16)).toBeLessThanOrEqual(Date.now());
  });

  it("steps past a parent written with a clock ahead of ours, keeping its time", () => {
    const ahead = `${(Date.now() + 60_000).toString(16).padStart(12, "0")}-0000ff-abcdef`;
    const id = newCheckpointId(ahead);
    expect(id > ahead).toBe(true);
    expect(id.slice(0, 19)).toBe(`${ahead.slice(0, 12)}-000100`);
    // A parent whose counter is at its maximum: the next one keeps every digit, as it always did.
    const full = `${(Date.now() + 120_000).toString(16).padStart(12, "0")}-ffffff-000000`;
    const next = newCheckpointId(full);
    expect(next.startsWith(`${full.slice(0, 12)}-1000000-`)).toBe(true);
  });
});
