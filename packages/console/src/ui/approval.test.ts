import { describe, expect, it } from "vitest";
import type { InterruptApproval, Whoami } from "@rein/client";
import { listed, policyText, progressText, refusalText, standingOf } from "./approval.ts";

const finance: InterruptApproval = {
  required: 2,
  approvals: [{ actor: "alice@acme", digest: "sha256:00", at: "2026-12-02T06:00:00.000Z" }],
  policy: { groups: ["finance"], count: 2, notRequester: true },
};
const me = (subject: string, groups: string[] = [], roles: string[] = []): Whoami => ({
  subject,
  tenant: "acme",
  scopes: ["resume"],
  groups,
  roles,
});

describe("approval policies in words", () => {
  it("reads progress as approvals so far of the count, with short names", () => {
    expect(progressText(finance)).toBe("1 of 2: alice");
    expect(progressText({ ...finance, approvals: [] })).toBe("0 of 2");
  });

  it("says who may approve and whether the requester may", () => {
    expect(policyText(finance.policy, 2)).toBe("needs 2 approvers from finance; not the requester");
    // notRequester defaults to count >= 2.
    expect(policyText({ roles: ["lead", "cfo"], subjects: ["carol@acme"] }, 1)).toBe(
      "needs 1 approver with role lead or cfo or among carol",
    );
    expect(policyText({ count: 3 }, 3)).toBe("needs 3 approvers; not the requester");
    expect(policyText({ count: 2, notRequester: false }, 2)).toBe("needs 2 approvers");
  });

  it("knows whether whoami is listed by subject, group or role", () => {
    expect(listed(finance.policy, me("bob@acme", ["finance"]))).toBe(true);
    expect(listed(finance.policy, me("dave@acme", ["support"]))).toBe(false);
    expect(listed({ roles: ["cfo"] }, me("erin@acme", [], ["cfo"]))).toBe(true);
    expect(listed({}, me("anyone"))).toBe(true);
    expect(listed({ subjects: ["dave@acme"] }, me("dave@acme"))).toBe(true);
  });

  it("puts the reviewer who approved on hold, and one not listed out, before any click", () => {
    expect(standingOf(finance, me("alice@acme", ["finance"]))).toEqual({
      kind: "approved",
      note: "You approved; waiting for another approver.",
    });
    expect(standingOf(finance, me("bob@acme", ["finance"]))).toEqual({ kind: "free" });
    const out = standingOf(finance, me("dave@acme", ["support"]));
    expect(out.kind).toBe("not_listed");
    expect(out.kind === "not_listed" && out.note).toContain("from finance");
    expect(standingOf(undefined, me("dave@acme"))).toEqual({ kind: "free" });
  });

  it("words a 403 with its rule, the server's message and that nothing was applied", () => {
    const text = refusalText("requester", "carol@acme started run r_1.");
    expect(text).toContain("does not let the requester approve it");
    expect(text).toContain("The server said: carol@acme started run r_1.");
    expect(text.endsWith("Nothing was applied.")).toBe(true);
  });
});
