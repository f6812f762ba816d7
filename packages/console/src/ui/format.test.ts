import { describe, expect, it } from "vitest";
import {
  count,
  deadlineText,
  duration,
  formatValue,
  humanize,
  kindOf,
  pageRange,
  payloadSummary,
  shortId,
  treePath,
} from "./format.ts";

describe("format", () => {
  it("draws the run-tree path as orchestrator › sub-agent › node", () => {
    const path = [
      { runId: "r1", graph: "support-desk", node: "refund", taskId: "t1" },
      { runId: "r2", graph: "refund_agent", node: "tools", taskId: "t2" },
    ];
    expect(treePath({ path, graph: "refund_agent", node: "tools" })).toBe(
      "support-desk › refund › tools",
    );
    expect(treePath({ path: [], graph: "ask", node: "ask" })).toBe("ask › ask");
  });

  it("summarises decisions, questions and other payloads in one clipped line", () => {
    expect(
      payloadSummary({
        action: "refund",
        args: { amount: 5, to: "x" },
        description: "Refund?",
        allow: {},
      }),
    ).toBe("Refund: to x, amount 5");
    // An amount with a currency unit leads, formatted as money.
    expect(
      payloadSummary({
        action: "issue_refund",
        args: { orderId: "1042", reason: "damaged", amount: 120 },
        allow: {},
        units: { amount: "USD" },
      }),
    ).toBe("Issue refund: amount $120.00, orderId 1042, reason damaged");
    expect(payloadSummary({ question: "Proceed?" })).toBe("Proceed?");
    expect(payloadSummary({ n: 1 })).toBe('{"n":1}');
    expect(payloadSummary("x".repeat(200), 10)).toBe(`${"x".repeat(9)}…`);
  });

  it("formats numbers, money and action names for people", () => {
    expect(formatValue(1234.5, "USD")).toBe("$1,234.50");
    expect(formatValue(1234.5, "EUR")).toBe("€1,234.50");
    expect(formatValue(12, "kg")).toBe("12 kg");
    expect(formatValue(10000)).toBe("10,000");
    expect(formatValue({ a: 1 })).toBe('{"a":1}');
    expect(count(10_000)).toBe("10,000");
    expect(humanize("issue_refund")).toBe("Issue refund");
    expect(humanize("sendEmail")).toBe("Send email");
  });

  it("says ages and deadlines in words", () => {
    expect(duration(42_000)).toBe("42 s");
    expect(duration(5 * 60_000)).toBe("5 min");
    expect(duration(3 * 3_600_000)).toBe("3 h");
    expect(duration(72 * 3_600_000)).toBe("3 d");
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(deadlineText(null, now)).toBe("none");
    expect(deadlineText("2026-01-01T00:05:00Z", now)).toBe("in 5 min");
    expect(deadlineText("2025-12-31T23:59:00Z", now)).toBe("1 min ago");
    expect(shortId("abcdefghijkl", 4)).toBe("abcd…");
    expect(shortId(null)).toBe("—");
  });

  it("classifies interrupts for the kind filter", () => {
    expect(kindOf({ kind: "dynamic", payload: { action: "a", args: {}, allow: {} } })).toBe(
      "decision",
    );
    expect(kindOf({ kind: "dynamic", payload: { question: "?" } })).toBe("question");
    expect(kindOf({ kind: "before", payload: null })).toBe("before");
  });

  it("says which questions of how many the queue's page shows", () => {
    expect(pageRange(0, 0, null)).toBe("");
    expect(pageRange(0, 0, 0)).toBe("0 pending");
    expect(pageRange(100, 100, 10_000)).toBe("101–200 of 10,000 pending");
    expect(pageRange(0, 3, 3)).toBe("1–3 of 3 pending");
  });
});
