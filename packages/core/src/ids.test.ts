import { describe, expect, it } from "vitest";
import { InvalidIdError } from "./errors.ts";
import { asCheckpointId, asInterruptId, asRunId, asTaskId } from "./ids.ts";

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
