import { describe, expect, it } from "vitest";
import { z } from "zod";
import { MemorySaver } from "../checkpoint/memory.ts";
import { InvalidLadderError } from "../errors.ts";
import { lastValue, START, StateGraph } from "../index.ts";
import { agent } from "../prebuilt/agent.ts";
import { tool } from "../prebuilt/tool-node.ts";
import type { ThreadId } from "../ids.ts";
import { defineInterrupt } from "./define.ts";
import { dueStep, planLadder, widenedPolicy, type LadderOptions } from "./ladder.ts";

const NOW = new Date("2026-01-01T00:00:00.000Z");

function refused(options: LadderOptions): InvalidLadderError {
  try {
    planLadder(options, NOW);
  } catch (error) {
    if (error instanceof InvalidLadderError) return error;
    throw error;
  }
  throw new Error("the ladder was accepted");
}

describe("planLadder", () => {
  it("fixes each step's time from when the question is raised; the deadline is the first step", () => {
    const { ladder, deadline } = planLadder(
      {
        remind: ["1h", "2h"],
        escalate: { after: "4h", approvers: { groups: ["managers"] } },
        timeout: "1d",
      },
      NOW,
    );
    expect(ladder).toEqual({
      remindAt: ["2026-01-01T01:00:00.000Z", "2026-01-01T02:00:00.000Z"],
      escalateAt: "2026-01-01T04:00:00.000Z",
      escalateTo: { groups: ["managers"] },
      timeoutAt: "2026-01-02T00:00:00.000Z",
    });
    expect(deadline).toBe("2026-01-01T01:00:00.000Z");
  });

  it("a plain timeout stays a plain deadline (no ladder stored)", () => {
    expect(planLadder({ timeout: "90s" }, NOW)).toEqual({
      ladder: null,
      deadline: "2026-01-01T00:01:30.000Z",
    });
    expect(planLadder({}, NOW)).toEqual({ ladder: null, deadline: null });
  });

  it("refuses steps out of order with invalid_ladder, naming the step", () => {
    const late = refused({ remind: "5h", escalate: { after: "4h", approvers: { groups: ["m"] } } });
    expect(late.code).toBe("invalid_ladder");
    expect(late.details).toMatchObject({ rule: "order", step: "escalate.after" });
    expect(refused({ remind: "2h", timeout: "2h" }).details).toMatchObject({ step: "timeout" });
    expect(refused({ remind: ["2h", "1h"] }).details).toMatchObject({ step: "remind[1]" });
    expect(
      refused({ escalate: { after: "1d", approvers: { roles: ["lead"] } }, timeout: "4h" }).details,
    ).toMatchObject({ rule: "order", step: "timeout" });
  });

  it("refuses an escalation to nobody and a malformed duration", () => {
    expect(refused({ escalate: { after: "1h", approvers: {} } }).details).toMatchObject({
      rule: "approvers",
    });
    expect(refused({ remind: "soon" }).details).toMatchObject({ rule: "duration" });
  });
});

describe("ladder steps", () => {
  const { ladder } = planLadder(
    { remind: "1h", escalate: { after: "2h", approvers: { subjects: ["maria"] } }, timeout: "3h" },
    NOW,
  );
  const at = (deadline: string | null) => ({ ladder, deadline }) as never;

  it("the step due is read from the row's deadline", () => {
    expect(dueStep(at(ladder?.remindAt[0] ?? null))).toEqual({
      kind: "remind",
      at: "2026-01-01T01:00:00.000Z",
    });
    expect(dueStep(at(ladder?.escalateAt ?? null)).kind).toBe("escalate");
    expect(dueStep(at(ladder?.timeoutAt ?? null)).kind).toBe("timeout");
  });

  it("an escalation widens a listed policy and leaves count, four eyes and open policies", () => {
    const policy = {
      groups: ["support"],
      count: 2,
      notRequester: true,
      requester: "rita",
      digest: "sha256:x",
    };
    expect(widenedPolicy(policy, { groups: ["managers"], subjects: ["maria"] })).toEqual({
      subjects: ["maria"],
      groups: ["support", "managers"],
      count: 2,
      notRequester: true,
      requester: "rita",
      digest: "sha256:x",
    });
    const open = { count: 1, notRequester: false, requester: null, digest: "sha256:y" };
    expect(widenedPolicy(open, { groups: ["managers"] })).toBeUndefined();
    expect(widenedPolicy(null, { groups: ["managers"] })).toBeUndefined();
  });
});

describe("where a ladder is declared", () => {
  it("defineInterrupt refuses a malformed ladder at the declaration and asks with a valid one", async () => {
    expect(() =>
      defineInterrupt("ladder.bad", { answer: z.string(), remind: "2h", timeout: "1h" }),
    ).toThrow(InvalidLadderError);
    const question = defineInterrupt<{ q: string }, string>("ladder.good", {
      answer: z.string(),
      remind: "1h",
      escalate: { after: "2h", approvers: { groups: ["managers"] } },
      timeout: "3h",
      onTimeout: "no",
    });
    const saver = new MemorySaver();
    const graph = new StateGraph({ decision: lastValue<string>() })
      .addNode("ask", () => ({ decision: question.ask({ q: "?" }) }))
      .addEdge(START, "ask")
      .compile({ checkpointer: saver });
    const r = await graph.invoke({}, { threadId: "define-ladder" });
    expect(r.interrupts[0]?.escalation).toMatchObject({
      stage: "none",
      escalatedTo: { groups: ["managers"] },
      nextAt: r.interrupts[0]?.escalation?.remindAt[0],
    });
    const stored = await saver.getThreadInterrupts("define-ladder" as ThreadId);
    expect(stored[0]?.onTimeout).toEqual({ kind: "value", value: "no" });
  });

  it("a per-tool ladder out of order is refused when the agent is built", () => {
    expect(() =>
      agent({
        model: () => ({ role: "assistant", content: "hi" }),
        tools: [tool({ name: "refund", run: () => "refunded" })],
        approve: { refund: { remind: "2h", timeout: "1h" } },
        checkpointer: new MemorySaver(),
      }),
    ).toThrow(InvalidLadderError);
  });

  it("an agent's per-tool approval takes the ladder and onTimeout decision", async () => {
    const saver = new MemorySaver();
    const graph = agent({
      model: (messages) =>
        messages.some((m) => m.role === "tool")
          ? { role: "assistant", content: "done" }
          : {
              role: "assistant",
              content: "refunding",
              toolCalls: [{ id: "c1", name: "refund", args: { amount: 5 } }],
            },
      tools: [tool({ name: "refund", run: () => "refunded" })],
      approve: {
        refund: {
          approvers: { groups: ["support"] },
          remind: "1h",
          escalate: { after: "2h", approvers: { groups: ["managers"] } },
          timeout: "3h",
          onTimeout: { type: "ignore", reason: "nobody answered" },
        },
      },
      checkpointer: saver,
    });
    const r = await graph.invoke(
      { messages: [{ role: "user", content: "refund" }] },
      { threadId: "agent-ladder" },
    );
    const asked = Date.now();
    expect(r.interrupts[0]?.escalation?.stage).toBe("none");
    expect(await graph.resolveExpiredInterrupts(new Date(asked + 3 * 3_600_000 + 1000))).toBe(1);
    const state = await graph.getState({ threadId: "agent-ladder" });
    const messages = state.values.messages as { role: string; content: unknown }[];
    expect(JSON.stringify(messages)).toContain("nobody answered");
  });
});
