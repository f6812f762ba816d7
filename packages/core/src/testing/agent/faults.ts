/**
 * The agent contracts of what goes wrong or is turned down, on the real client library: the
 * client the test project names is the one loaded; an abort while the client is waiting ends the
 * run `cancelled`; a declined call reaches the model as declined; a failed or cut answer ends the
 * run with a typed error instead of passing on as a whole answer.
 */
import { expect, it } from "vitest";
import { ErrorCodes } from "../../errors.ts";
import { Command } from "../../graph/command.ts";
import type { ToolMessage } from "../../prebuilt/messages.ts";
import type { ToolDecision } from "../../prebuilt/tool-node.ts";
import { script, setup, type AgentAdapterInitializer, type ScriptedTurn } from "./setup.ts";

const ask = { messages: [{ role: "user" as const, content: "Refund order 1042" }] };

/** The client this project runs the adapter on is the one it names. */
export function clientContract(init: AgentAdapterInitializer): void {
  const client = init.client;
  if (!client) return;
  const named = process.env.REIN_CLIENT_UNDER_TEST;
  it(`runs on the client it is handed (${client.name}@${client.version})`, () => {
    if (named) expect(`${client.name}@${client.version}`.startsWith(named)).toBe(true);
    else expect(client.version).toMatch(/^\d+\.\d+\.\d+/);
  });
}

/** An abort while the client waits for the provider ends the run cancelled, on every mode. */
export function abortContracts(init: AgentAdapterInitializer): void {
  for (const stream of [false, true])
    it(`an abort while the client waits ends the run cancelled, recording no answer (${stream ? "streaming" : "one response"})`, async () => {
      const { graph, adapter, executed } = setup(init, stream, [{ hang: true }]);
      const controller = new AbortController();
      const threadId = `abort-${stream ? "s" : "g"}`;
      const running = graph.invoke(ask, { threadId, signal: controller.signal });
      await expect
        .poll(() => adapter.requests().length === 1, { timeout: 2_000, interval: 5 })
        .toBe(true);
      controller.abort("the user pressed stop");
      const result = await running;
      expect(result.status).toBe("cancelled");
      const state = await graph.getState({ threadId });
      expect(state.values.messages.map((m) => m.role)).toEqual(["user"]);
      expect(state.next).toEqual(["model"]);
      expect(executed).toEqual([]);
    });
}

async function decline(init: AgentAdapterInitializer, threadId: string, decision: ToolDecision) {
  const { graph, adapter, executed } = setup(init);
  const paused = await graph.invoke(ask, { threadId });
  const id = paused.interrupts[0]?.id as string;
  const done = await graph.invoke(Command.resumeMap({ [id]: decision }), { threadId });
  const result = done.values.messages.find((m): m is ToolMessage => m.role === "tool");
  return { done, result, executed, next: adapter.requests()[1]?.body ?? "" };
}

/** A declined call reaches the model as declined, with the reviewer's words. */
export function declineContracts(init: AgentAdapterInitializer): void {
  it("a rejected call reaches the model declined, with the reviewer's reason, and never runs", async () => {
    const reason = "Refunds over $20 need a manager.";
    const { done, result, executed, next } = await decline(init, "decline-ignore", {
      type: "ignore",
      reason,
    });
    expect(done.status).toBe("done");
    expect(executed).toEqual([]);
    expect(result).toMatchObject({ status: "ignored", review: { decision: "ignore" } });
    expect(next).toContain(reason);
    if (init.declinedAs) expect(next).toMatch(init.declinedAs);
  });

  it("an answer in the tool's place reaches the model as the call's result, and the tool never runs", async () => {
    const message = "Refunded by hand: reference R-77.";
    const { done, result, executed, next } = await decline(init, "decline-respond", {
      type: "respond",
      message,
    });
    expect(done.status).toBe("done");
    expect(executed).toEqual([]);
    expect(result).toMatchObject({ status: "responded", content: message });
    expect(next).toContain(message);
  });
}

/** A failed or cut answer ends the run with the typed error, and no partial answer is stored. */
export function failedStreamContracts(init: AgentAdapterInitializer): void {
  for (const stream of [false, true])
    for (const fail of ["error", "cut"] as const) {
      const gap = !stream && fail === "error" ? init.gaps?.failedResponse : undefined;
      const what = fail === "error" ? "failed" : "cut";
      const mode = stream ? "streaming" : "one response";
      it(
        gap
          ? `a failed answer ends the run with the client's error (gap: ${gap})`
          : `a ${what} answer ends the run with a model_failed error, storing no partial answer (${mode})`,
        async () => {
          const turns: ScriptedTurn[] = [{ ...script()[1], text: "Refunded $2", fail }];
          const { graph, executed } = setup(init, stream, turns);
          const threadId = `fail-${fail}-${stream ? "s" : "g"}`;
          const result = await graph.invoke(ask, { threadId });
          expect(result.status).toBe("error");
          if (gap) expect(result.error).toMatchObject({ node: "model" });
          else
            expect(result.error).toMatchObject({
              code: ErrorCodes.MODEL_FAILED,
              node: "model",
              // The adapter's details reach the run: which client, and why.
              details: {
                client: expect.any(String) as unknown,
                reason: expect.any(String) as unknown,
              },
            });
          const state = await graph.getState({ threadId });
          expect(state.values.messages.map((m) => m.role)).toEqual(["user"]);
          expect(executed).toEqual([]);
        },
      );
    }
  for (const fail of ["truncated", "dropped"] as const)
    it(`a stream that ${fail === "truncated" ? "ends before its terminal event" : "loses its connection"} ends the run with a retryable model_failed error, storing no partial answer`, async () => {
      const turns: ScriptedTurn[] = [{ ...script()[1], text: "Refunded $2", fail }];
      const { graph, executed } = setup(init, true, turns);
      const threadId = `fail-${fail}`;
      const result = await graph.invoke(ask, { threadId });
      expect(result.status).toBe("error");
      expect(result.error).toMatchObject({
        code: ErrorCodes.MODEL_FAILED,
        node: "model",
        details: { reason: fail, retryable: true },
      });
      const state = await graph.getState({ threadId });
      expect(state.values.messages.map((m) => m.role)).toEqual(["user"]);
      expect(executed).toEqual([]);
    });
}

/** The provider's own approval requests, where the client has them. */
export function providerApprovalContracts(init: AgentAdapterInitializer): void {
  const convention = init.providerApprovals;
  if (!convention) return;
  const call = { id: "mcp_1", name: "delete_ticket", args: { ticket: "T-9" }, approvalId: "apr_1" };
  const turns = (): ScriptedTurn[] => [
    { text: "Deleting the ticket.", providerCall: call },
    { text: "Deleted T-9.", providerCall: { ...call, output: "deleted T-9" } },
  ];
  for (const stream of [false, true])
    it(`a provider's approval request pauses the call it runs itself, and the approval goes back to it; nothing runs locally (${stream ? "streaming" : "one response"})`, async () => {
      const { graph, adapter, executed } = setup(init, stream, turns());
      const threadId = `provider-${stream ? "s" : "g"}`;
      const paused = await graph.invoke(ask, { threadId });
      expect(paused.status).toBe("interrupted");
      expect(paused.interrupts[0]?.payload).toMatchObject({
        action: "delete_ticket",
        args: { ticket: "T-9" },
        providerApprovalId: "apr_1",
        allow: { edit: false },
      });
      const id = paused.interrupts[0]?.id as string;
      const done = await graph.invoke(Command.resumeMap({ [id]: { type: "accept" } }), {
        threadId,
      });
      expect(done.status).toBe("done");
      const next = adapter.requests()[1]?.body ?? "";
      expect(next).toMatch(convention.approvedAs("apr_1"));
      expect(next).not.toContain("Unknown tool");
      expect(done.values.messages.at(-1)).toMatchObject({ role: "assistant" });
      expect(executed).toEqual([]);
    });

  it("a denied provider approval goes back denied, with the reviewer's reason", async () => {
    const { graph, adapter } = setup(init, false, [turns()[0] as ScriptedTurn, { text: "Kept." }]);
    const paused = await graph.invoke(ask, { threadId: "provider-deny" });
    const id = paused.interrupts[0]?.id as string;
    const reason = "Keep the ticket for the audit.";
    await graph.invoke(Command.resumeMap({ [id]: { type: "ignore", reason } }), {
      threadId: "provider-deny",
    });
    expect(adapter.requests()[1]?.body ?? "").toMatch(convention.deniedAs("apr_1", reason));
  });
}
