import { describe, expect, it } from "vitest";
import { ratio, timing, value } from "./result.ts";
import { formatCell, formatNumber, formatRatio } from "./report.ts";
import { quantile, summarize } from "./stats.ts";

describe("stats", () => {
  it("interpolates quantiles between closest ranks", () => {
    expect(quantile([3, 1, 2], 0.5)).toBe(2);
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(
      quantile(
        Array.from({ length: 101 }, (_, i) => i),
        0.95,
      ),
    ).toBe(95);
  });

  it("summarizes a sample", () => {
    expect(summarize([1, 2, 3, 4, 5])).toMatchObject({ median: 3, min: 1, max: 5, mean: 3, n: 5 });
  });
});

describe("report", () => {
  it("divides the peer's headline by Rein's", () => {
    const row = {
      scenario: "s",
      variant: "v",
      metric: "m",
      rein: timing("ms", summarize([2])),
      peer: timing("ms", summarize([5])),
    };
    expect(ratio(row)).toBe(2.5);
    expect(formatRatio(row)).toBe("2.50×");
    expect(formatRatio({ ...row, peer: { kind: "unsupported", note: "no API" } })).toBe("—");
  });

  it("formats numbers and cells for the table", () => {
    expect(formatNumber(1234567)).toBe("1,234,567");
    expect(formatNumber(0.12345)).toBe("0.123");
    expect(formatCell(value("bytes", 2048))).toBe("2,048 bytes");
    expect(formatCell({ kind: "skipped", reason: "a|b" })).toBe("skipped: a\\|b");
  });
});
