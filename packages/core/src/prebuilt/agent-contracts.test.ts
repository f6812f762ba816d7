import { ModelResponseError } from "../errors.ts";
import { runAgentContracts, type RecordedRequest } from "../testing/agent/index.ts";
import type { Model, ModelDelta } from "./messages.ts";

/** Rejects once `signal` aborts, as a client library does. */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) =>
    signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))),
  );
}

function failure(fail: "error" | "cut" | "truncated" | "dropped"): ModelResponseError {
  return new ModelResponseError("The model's answer is not whole.", {
    client: "plain",
    reason: fail === "cut" ? "length" : fail,
    ...(fail === "truncated" || fail === "dropped" ? { retryable: true } : {}),
  });
}

// A plain function is a model too: the suite runs on it exactly as on the client adapters.
runAgentContracts({
  name: "a plain function",
  create(turns, { stream }) {
    const requests: RecordedRequest[] = [];
    let next = 0;
    const model: Model = async (messages, { tools, signal }) => {
      requests.push({ tools: tools.map((t) => t.name), body: JSON.stringify(messages) });
      const turn = turns[next++] ?? { text: "" };
      if (turn.hang) return aborted(signal);
      const usage = turn.usage ? { usage: turn.usage } : {};
      if (!stream) {
        if (turn.fail) throw failure(turn.fail);
        return {
          role: "assistant",
          content: turn.text ?? "",
          ...(turn.toolCalls ? { toolCalls: turn.toolCalls } : {}),
          ...usage,
        };
      }
      return (async function* (): AsyncGenerator<ModelDelta> {
        for (const word of (turn.text ?? "").split(/(?<= )/)) {
          await Promise.resolve(); // tokens arrive over time, as from a network
          yield { type: "text", text: word };
        }
        if (turn.fail) throw failure(turn.fail);
        for (const call of turn.toolCalls ?? []) yield { type: "tool-call", call };
        if (turn.usage) yield { type: "usage", usage: turn.usage };
      })();
    };
    return { model, requests: () => requests };
  },
});
