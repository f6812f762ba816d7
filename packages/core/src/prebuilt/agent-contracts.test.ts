import { runAgentContracts, type RecordedRequest } from "../testing/agent/index.ts";
import type { Model, ModelDelta } from "./messages.ts";

// A plain function is a model too: the suite runs on it exactly as on the client adapters.
runAgentContracts({
  name: "a plain function",
  create(turns, { stream }) {
    const requests: RecordedRequest[] = [];
    let next = 0;
    const model: Model = (messages, { tools }) => {
      requests.push({ tools: tools.map((t) => t.name), body: JSON.stringify(messages) });
      const turn = turns[next++] ?? { text: "" };
      const usage = turn.usage ? { usage: turn.usage } : {};
      if (!stream)
        return {
          role: "assistant",
          content: turn.text ?? "",
          ...(turn.toolCalls ? { toolCalls: turn.toolCalls } : {}),
          ...usage,
        };
      return (async function* (): AsyncGenerator<ModelDelta> {
        for (const word of (turn.text ?? "").split(/(?<= )/)) {
          await Promise.resolve(); // tokens arrive over time, as from a network
          yield { type: "text", text: word };
        }
        for (const call of turn.toolCalls ?? []) yield { type: "tool-call", call };
        if (turn.usage) yield { type: "usage", usage: turn.usage };
      })();
    };
    return { model, requests: () => requests };
  },
});
