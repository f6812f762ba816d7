/**
 * How an applied answer is labelled: the decision read from the answer value, the actor type,
 * which ids of a batch count (resolved ones, with the time since they were asked), and what the
 * store view remembers of the interrupts read through it.
 */
import { describe, expect, it } from "vitest";
import { makeInterrupt } from "@rein/core/testing";
import type { AnswerBatch } from "@rein/core/store";
import { SeenInterrupts, actorTypeOf, decisionOf, resolvedBy } from "./answers.ts";

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
  const asked = new Map([
    ["a", { createdAt, graph: "support" }],
    ["p", { createdAt, graph: "support" }],
    ["c", { createdAt, graph: "agent" }],
  ]);
  const batch = (over: Partial<AnswerBatch>): AnswerBatch => ({
    threadId: "t" as AnswerBatch["threadId"],
    answers: [],
    wake: [],
    actor: "alice@acme",
    action: "answer",
    ...over,
  });
  const id = (text: string) => text as AnswerBatch["answers"][number]["id"];

  it("counts answered and cancelled ids, not those that only gained an approval", () => {
    const applied = batch({
      answers: [
        { id: id("a"), value: { type: "accept" } },
        { id: id("p"), value: { type: "accept" } },
      ],
      cancel: [id("c")],
    });
    expect(resolvedBy(applied, ["p"], asked, at)).toEqual([
      { graph: "support", decision: "approve", actorType: "human", seconds: 90 },
      { graph: "agent", decision: "cancel", actorType: "human", seconds: 90 },
    ]);
  });

  it("labels everything the deadline timer resolved as timeout, answered or cancelled", () => {
    const timer = batch({
      actor: "system:timer",
      action: "timeout",
      answers: [{ id: id("a"), value: { approved: false } }],
      cancel: [id("c")],
    });
    expect(resolvedBy(timer, [], asked, at)).toEqual([
      { graph: "support", decision: "timeout", actorType: "timer", seconds: 90 },
      { graph: "agent", decision: "timeout", actorType: "timer", seconds: 90 },
    ]);
  });
});

describe("SeenInterrupts", () => {
  it("remembers the records of reads, and a page's only once the caller decodes it", () => {
    const seen = new SeenInterrupts();
    seen.add([makeInterrupt("t", "x", { createdAt: "2025-01-01T00:00:05.000Z" })]);
    let decoded = 0;
    const page = seen.page({
      get items() {
        decoded += 1;
        return [makeInterrupt("t", "y")];
      },
      total: 1,
    });
    expect(decoded).toBe(0);
    expect(seen.take("y")).toBeUndefined();
    expect(page.items.map((i) => i.id)).toEqual(["y"]);
    expect(seen.take("y")).toEqual({ createdAt: "2025-01-01T00:00:00.000Z", graph: "agent" });
    expect(seen.take("x")).toEqual({ createdAt: "2025-01-01T00:00:05.000Z", graph: "agent" });
    // Taken once: an answered interrupt is forgotten.
    expect(seen.take("x")).toBeUndefined();
  });
});
