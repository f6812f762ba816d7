import { describe, expect, it } from "vitest";
import { escalationBadge, targetsText } from "./escalation.ts";

const ladder = {
  remindAt: ["2026-12-02T10:00:00.000Z"],
  escalateAt: "2026-12-02T13:00:00.000Z",
  escalatedTo: { groups: ["managers"], subjects: ["maria"] },
  timeoutAt: null,
  nextAt: null,
};

describe("escalation badge", () => {
  it("shows nothing before the first step, then reminded, then escalated with whom", () => {
    expect(escalationBadge(undefined)).toBeNull();
    expect(escalationBadge({ ...ladder, stage: "none" })).toBeNull();
    expect(escalationBadge({ ...ladder, stage: "reminded" })?.text).toBe("reminded");
    expect(escalationBadge({ ...ladder, stage: "escalated" })).toEqual({
      text: "escalated",
      title: "Escalated: subject maria, group managers may answer it now too.",
    });
  });

  it("names nobody for an empty target list", () => {
    expect(targetsText(null)).toBe("nobody");
    expect(targetsText({})).toBe("nobody");
  });
});
