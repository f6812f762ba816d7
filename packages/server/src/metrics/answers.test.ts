/**
 * How an applied answer is labelled: the decision read from the answer value, the actor type,
 * and which rows of a batch count (resolved ones, with the time since they were asked).
 */
import { describe, expect, it } from "vitest";
import { makeInterrupt } from "@rein/core/testing";
import type { AnswerBatch } from "@rein/core/store";
import { actorTypeOf, decisionOf, resolvedBy } from "./answers.ts";

describe("decisionOf", () => {
  it.each([
    [{ type: "accept" }, "approve"],
    [{ decision: "approve" }, "approve"],
    [{ approved: true, note: "fine" }, "approve"],
    [true, "approve"],
    [{ type: "ignore", reason: "no" }, "reject"],
    [{ decision: "reject" }, "reject"],
    [{ approved: false }, "reject"],
    [false, "reject"],
    [{ type: "edit", args: { amount: 20 } }, "edit"],
    [{ type: "respond", message: "ask again" }, "respond"],
    [{ text: "yes" }, "value"],
    ["approve", "value"],
    [42, "value"],
    [null, "value"],
    [{ type: "something-else" }, "value"],
  ])("%j is %s", (value, decision) => {
    expect(decisionOf(value)).toBe(decision);
  });
});

describe("actorTypeOf", () => {
  it("tells the deadline timer, other system actors and people apart", () => {
    expect(actorTypeOf({ action: "timeout", actor: "system:timer" })).toBe("timer");
    expect(actorTypeOf({ action: "answer", actor: "system:escalation" })).toBe("system");
    expect(actorTypeOf({ action: "answer", actor: "alice@acme" })).toBe("human");
    expect(actorTypeOf({ action: "cancel", actor: "alice@acme" })).toBe("human");
  });
});

describe("resolvedBy", () => {
  const createdAt = "2025-01-01T00:00:00.000Z";
  const at = Date.parse(createdAt) + 90_000;
  const batch = (over: Partial<AnswerBatch>): AnswerBatch => ({
    threadId: "t" as AnswerBatch["threadId"],
    answers: [],
    wake: [],
    actor: "alice@acme",
    action: "answer",
    ...over,
  });

  it("counts resolved rows under their root graph, with the seconds since they were asked", () => {
    const answered = makeInterrupt("t", "a", {
      status: "answered",
      createdAt,
      graph: "refund",
      path: [
        { runId: "r0", graph: "support", node: "delegate", taskId: "t0" },
        { runId: "r1", graph: "refund", node: "review", taskId: "t1" },
      ] as never,
    });
    const stillPending = makeInterrupt("t", "p", { status: "pending", createdAt });
    const cancelled = makeInterrupt("t", "c", { status: "cancelled", createdAt });
    const applied = batch({
      answers: [
        { id: answered.id, value: { type: "accept" } },
        { id: stillPending.id, value: { type: "accept" } },
      ],
      cancel: [cancelled.id],
    });
    expect(resolvedBy(applied, [answered, stillPending, cancelled], at)).toEqual([
      { graph: "support", decision: "approve", actorType: "human", seconds: 90 },
      { graph: "agent", decision: "cancel", actorType: "human", seconds: 90 },
    ]);
  });

  it("labels everything the deadline timer resolved as timeout, answered or cancelled", () => {
    const valued = makeInterrupt("t", "v", { status: "answered", createdAt });
    const cancelled = makeInterrupt("t", "c", { status: "cancelled", createdAt });
    const timer = batch({
      actor: "system:timer",
      action: "timeout",
      answers: [{ id: valued.id, value: { approved: false } }],
      cancel: [cancelled.id],
    });
    expect(resolvedBy(timer, [valued, cancelled], at).map((r) => r.decision)).toEqual([
      "timeout",
      "timeout",
    ]);
    expect(resolvedBy(timer, [valued], at)[0]?.actorType).toBe("timer");
  });
});
