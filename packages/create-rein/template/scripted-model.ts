/**
 * A scripted language model: the AI SDK's mock model playing one support conversation, so the
 * app runs without a network or an API key. It asks to refund order 1042, then reports what the
 * refund tool said.
 */
import { MockLanguageModelV3 } from "ai/test";

type Prompt = Parameters<MockLanguageModelV3["doGenerate"]>[0]["prompt"];

/**
 * The tool result in the conversation, if the tool has run. A script decides on what the
 * conversation holds, never on its last message: a reviewer's steering note arrives as a user
 * message after the tool result, and a script that looked only at the last message would call
 * the tool again (and the run would ask for a second approval).
 */
function toolResult(prompt: Prompt): string | null {
  for (const message of prompt)
    if (message.role === "tool")
      for (const part of message.content)
        if (part.type === "tool-result")
          return part.output.type === "text" || part.output.type === "error-text"
            ? part.output.value
            : JSON.stringify(part.output);
  return null;
}

/** The scripted model, for `fromAiSdk(scriptedModel())`. */
export function scriptedModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    provider: "scripted",
    modelId: "support-script",
    doGenerate: ({ prompt }) => {
      const result = toolResult(prompt);
      const text = result === null ? "Let me refund that order." : `Done: ${result}.`;
      return Promise.resolve({
        content: [
          { type: "text" as const, text },
          ...(result === null
            ? [
                {
                  type: "tool-call" as const,
                  toolCallId: "call-1",
                  toolName: "issue_refund",
                  input: JSON.stringify({ orderId: "1042", amount: 80 }),
                },
              ]
            : []),
        ],
        finishReason: { unified: result === null ? "tool-calls" : "stop", raw: undefined },
        usage: {
          inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 0, text: 0, reasoning: 0 },
        },
        warnings: [],
      });
    },
  });
}
