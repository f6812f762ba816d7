import { describe, expect, it } from "vitest";
import type { RunTree } from "@rein/client";
import { pendingInWords, runName, runsOf, standing, statusWord } from "./runs.ts";

const run = (
  runId: string,
  namespace: string[],
  status: RunTree["status"],
  children: RunTree[] = [],
): RunTree => ({
  runId,
  threadId: "t",
  parentRunId: null,
  parentTaskId: null,
  graph: namespace.length ? `${namespace.at(-1)}_agent` : "desk",
  namespace,
  status,
  createdAt: "",
  updatedAt: "",
  children,
});

describe("runs in words", () => {
  it("says a paused run is paused and what it waits for", () => {
    const email = run("r-email", ["email"], "interrupted");
    const refund = run("r-refund", ["refund"], "done");
    const root = run("r-root", [], "interrupted", [refund, email]);
    expect(statusWord("interrupted")).toBe("paused");
    expect(statusWord("error")).toBe("failed");
    expect(standing(email, [{ runId: "r-email" }])).toBe("Paused: waiting for an answer.");
    expect(standing(email, [{ runId: "r-email" }, { runId: "r-email" }])).toBe(
      "Paused: waiting for 2 answers.",
    );
    expect(standing(root, [{ runId: "r-email" }])).toBe("Paused: waiting for its sub-agent email.");
    expect(standing(refund, [])).toBe("Done.");
    expect(
      standing({ ...refund, status: "error", error: { name: "E", message: "card declined" } }, []),
    ).toBe("Failed: card declined");
    expect(runsOf(root).map(runName)).toEqual(["desk", "refund", "email"]);
  });

  it("says what a pending question asks", () => {
    expect(
      pendingInWords({
        kind: "dynamic",
        node: "tools",
        payload: { action: "send_email", args: { to: "a@b" }, allow: {} },
      }),
    ).toBe("Send email: to a@b");
    expect(pendingInWords({ kind: "before", node: "pay", payload: null })).toBe(
      "Paused before pay runs",
    );
  });
});
