/**
 * `@rein/core/testing/agent`: the agent contract suite every model adapter runs against its real
 * client library (offline: the client's own fake or a recorded `fetch`). Tool call → approval →
 * a refused invalid edit → a valid edit → exactly one execution with the edited arguments →
 * the final answer, with steering and the edited arguments reaching the model.
 *
 * @example
 * ```ts
 * import { runAgentContracts } from "@rein/core/testing/agent";
 * runAgentContracts({ name: "ai-sdk", create: (turns) => scriptedAiSdkModel(turns) });
 * ```
 *
 * @module
 */
import { describe, expect, it } from "vitest";
import { InvalidAnswerError } from "../../errors.ts";
import { Command } from "../../graph/command.ts";
import {
  textOf,
  type AssistantMessage,
  type ToolMessage,
  type Usage,
} from "../../prebuilt/messages.ts";
import type { ToolDecisionRequest } from "../../prebuilt/tool-node.ts";
import type { StreamEvent } from "../../engine/events.ts";
import {
  abortContracts,
  clientContract,
  declineContracts,
  failedStreamContracts,
  providerApprovalContracts,
} from "./faults.ts";
import { setup, type AgentAdapterInitializer } from "./setup.ts";

export type {
  AgentAdapterInitializer,
  RecordedRequest,
  ScriptedAdapter,
  ScriptedTurn,
} from "./setup.ts";

/** Registers the agent contract tests (vitest) for one adapter. */
export function runAgentContracts(init: AgentAdapterInitializer): void {
  describe(`agent contracts on ${init.name}`, () => {
    clientContract(init);
    abortContracts(init);
    declineContracts(init);
    failedStreamContracts(init);
    providerApprovalContracts(init);
    it("the model is given the tools, and its tool call becomes one approval interrupt", async () => {
      const { graph, adapter, executed } = setup(init);
      const r = await graph.invoke(
        { messages: [{ role: "user", content: "Refund order 1042" }] },
        { threadId: "c1" },
      );
      expect(r.status).toBe("interrupted");
      expect(r.interrupts).toHaveLength(1);
      expect(r.interrupts[0]?.payload).toMatchObject({
        action: "refund",
        args: { orderId: "1042", amount: 50 },
        toolCallId: "call_1",
      } satisfies Partial<ToolDecisionRequest>);
      expect(adapter.requests()[0]?.tools).toEqual(["refund"]);
      expect(adapter.requests()[0]?.body).toContain("Refund order 1042");
      expect(executed).toEqual([]);
    });

    it("an invalid edit is refused with the schema issues and the interrupt stays pending", async () => {
      const { graph, executed } = setup(init);
      const r = await graph.invoke(
        { messages: [{ role: "user", content: "Refund order 1042" }] },
        { threadId: "c2" },
      );
      const id = r.interrupts[0]?.id as string;
      const refused = await graph
        .invoke(
          Command.resumeMap({ [id]: { type: "edit", args: { orderId: "1042", amount: "half" } } }),
          { threadId: "c2" },
        )
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(InvalidAnswerError);
      expect(JSON.stringify((refused as InvalidAnswerError).details.issues)).toContain("amount");
      const state = await graph.getState({ threadId: "c2" });
      expect(state.interrupts.map((i) => [i.id, i.status])).toEqual([[id, "pending"]]);
      expect(executed).toEqual([]);
    });

    it("an edit runs exactly once with the edited arguments, and the model sees them and the steering", async () => {
      const { graph, executed, adapter } = setup(init);
      const r = await graph.invoke(
        { messages: [{ role: "user", content: "Refund order 1042" }] },
        { threadId: "c3" },
      );
      const id = r.interrupts[0]?.id as string;
      const done = await graph.invoke(
        Command.resumeMap(
          { [id]: { type: "edit", args: { orderId: "1042", amount: 25 } } },
          { steering: "Half only: the customer kept one item.", actor: "alice@example.com" },
        ),
        { threadId: "c3" },
      );
      expect(done.status).toBe("done");
      expect(executed.map((e) => e.args)).toEqual([{ orderId: "1042", amount: 25 }]);
      const messages = done.values.messages;
      const result = messages.find((m): m is ToolMessage => m.role === "tool");
      expect(result).toMatchObject({
        status: "done",
        args: { orderId: "1042", amount: 25 },
        review: {
          decision: "edit",
          actor: "alice@example.com",
          interruptId: id,
          originalArgs: { orderId: "1042", amount: 50 },
        },
      });
      const steering = messages.find((m) => m.role === "user" && m.steering);
      expect(steering && textOf(steering)).toBe(
        "[Steering from alice@example.com] Half only: the customer kept one item.",
      );
      const last = messages.at(-1) as AssistantMessage;
      expect(last.role).toBe("assistant");
      expect(textOf(last)).toBe("Refunded $25 for order 1042.");
      const second = adapter.requests()[1]?.body ?? "";
      expect(second).toContain("[Steering from alice@example.com]");
      // The tool call the model sees carries the arguments that ran, never the model's 50.
      expect(second).toMatch(/amount\\*"?\s*:\s*25/);
      expect(second).not.toMatch(/amount\\*"?\s*:\s*50/);
    });

    it("an accepted call runs once even when the run is resumed again", async () => {
      const { graph, executed } = setup(init);
      const r = await graph.invoke(
        { messages: [{ role: "user", content: "Refund order 1042" }] },
        { threadId: "c4" },
      );
      const id = r.interrupts[0]?.id as string;
      const done = await graph.invoke(Command.resumeMap({ [id]: { type: "accept" } }), {
        threadId: "c4",
      });
      expect(done.status).toBe("done");
      await expect(
        graph.invoke(Command.resumeMap({ [id]: { type: "accept" } }), { threadId: "c4" }),
      ).rejects.toMatchObject({ code: "stale_target" });
      expect(executed).toHaveLength(1);
    });

    const usageGap = init.gaps?.usage;
    it(
      usageGap
        ? `token usage and message ids are kept (gap: ${usageGap})`
        : "token usage and message ids are kept",
      async () => {
        const { graph } = setup(init);
        const r = await graph.invoke(
          { messages: [{ role: "user", content: "Refund order 1042" }] },
          { threadId: "c5" },
        );
        const reply = r.values.messages.find((m): m is AssistantMessage => m.role === "assistant");
        const usage: Usage | undefined = reply?.usage;
        if (usageGap) expect(usage?.inputTokens).toBeUndefined();
        else expect(usage).toMatchObject({ inputTokens: 30, outputTokens: 12 });
      },
    );

    const streamGap = init.gaps?.streaming;
    it(
      streamGap
        ? `streaming yields messages events (gap: ${streamGap})`
        : "streaming yields messages events with node, task and run, assembling the same message",
      async () => {
        const { graph } = setup(init, true);
        const events: StreamEvent[] = [];
        for await (const event of graph.stream(
          { messages: [{ role: "user", content: "Refund order 1042" }] },
          { threadId: "c6", streamMode: ["messages"] },
        ))
          events.push(event);
        const deltas = events.filter(
          (e): e is Extract<StreamEvent, { type: "messages" }> => e.type === "messages",
        );
        if (streamGap) {
          expect(deltas).toEqual([]);
          return;
        }
        expect(deltas.length).toBeGreaterThan(1);
        expect(deltas.every((d) => d.node === "model" && d.taskId && d.runId)).toBe(true);
        const text = deltas
          .map((d) => d.delta as { type: string; text?: string })
          .filter((d) => d.type === "text")
          .map((d) => d.text)
          .join("");
        expect(text).toBe("Refunding the order.");
        const end = events.at(-1);
        expect(end?.type).toBe("end");
        expect(end?.type === "end" && end.result.status).toBe("interrupted");
      },
    );
  });
}
