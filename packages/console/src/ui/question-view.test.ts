import { describe, expect, it } from "vitest";
import type { InterruptListItem } from "@rein/client";
import { asDecision } from "./decision.ts";
import { holdOf, leftTheQueue, questionTitle, sentArgs } from "./question-view.ts";

const item = (id: string) => ({ id, payload: {} }) as unknown as InterruptListItem;
const refund = asDecision({
  action: "issue_refund",
  args: { amount: 60, orderId: "1042" },
  units: { amount: "USD" },
  allow: { accept: true, edit: true },
})!;

describe("question view", () => {
  it("holds back approvals once counted and everything when not listed", () => {
    expect(holdOf({ kind: "free" })).toBe("none");
    expect(holdOf({ kind: "approved", note: "" })).toBe("approve");
    expect(holdOf({ kind: "not_listed", note: "" })).toBe("all");
  });

  it("titles the screen by the action, a question, or that it is gone", () => {
    expect(questionTitle(item("i1"), refund)).toBe("Issue refund");
    expect(questionTitle(item("i1"), null)).toBe("Question");
    expect(questionTitle(null, null)).toBe("No longer pending");
  });

  it("says a question left the queue only when the feed has spoken and nothing was done here", () => {
    expect(leftTheQueue(item("i1"), false, [item("i2")])).toBe(true);
    expect(leftTheQueue(item("i1"), false, [item("i1")])).toBe(false);
    expect(leftTheQueue(item("i1"), false, null)).toBe(false);
    expect(leftTheQueue(item("i1"), true, [])).toBe(false);
    expect(leftTheQueue(null, false, [])).toBe(false);
  });

  it("restates the arguments an accept or an edit sent, and none for the other answers", () => {
    expect(sentArgs("accept", {}, refund)).toMatch(/amount .*60.*orderId 1042/);
    expect(sentArgs("edit", { args: { amount: 30 } }, refund)).toMatch(/^amount .*30/);
    expect(sentArgs("respond", { text: "no" }, refund)).toBe("");
  });
});
