import { describe, expect, it } from "vitest";
import { z } from "zod";
import { answerIssues, describeIssues } from "./answer-issues.ts";

const decision = z.discriminatedUnion("type", [
  z.object({ type: z.literal("accept") }),
  z.object({ type: z.literal("edit"), args: z.object({ amount: z.number() }) }),
]);
// Stored answer schemas go through JSON Schema, where a discriminated union becomes a plain one.
const stored = z.fromJSONSchema(z.toJSONSchema(decision, { io: "input" }));

describe("answerIssues", () => {
  it("reports the union branch the answer came closest to, with full paths", () => {
    const parsed = stored.safeParse({ type: "edit", args: { amount: "ten" } });
    expect(parsed.success).toBe(false);
    const issues = answerIssues(parsed.error?.issues ?? []);
    expect(issues).toEqual([
      { path: ["args", "amount"], message: "Invalid input: expected number, received string" },
    ]);
    expect(describeIssues(issues)).toBe(
      "args.amount: Invalid input: expected number, received string",
    );
  });

  it("keeps plain issues as they are", () => {
    const parsed = z.object({ ok: z.boolean() }).safeParse({});
    expect(describeIssues(answerIssues(parsed.error?.issues ?? []))).toBe(
      "ok: Invalid input: expected boolean, received undefined",
    );
  });
});
