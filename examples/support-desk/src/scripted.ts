/**
 * Scripted "models" for the demo: the AI SDK's own mock language model answering from the
 * prompt it is given, so runs are deterministic and need no network. Each answer depends only
 * on the conversation, so a resume in another process gets the same answer.
 *
 * Swapping in a real provider is one line per agent: `fromAiSdk(openai("gpt-4o"))` instead of
 * `fromAiSdk(scripted(...))`.
 */
import { MockLanguageModelV3 } from "ai/test";

type CallOptions = Parameters<MockLanguageModelV3["doGenerate"]>[0];

/** What a scripted model reads from its prompt. */
export interface PromptView {
  /** Text of the user messages that are not steering notes. */
  user: string[];
  /** Tool results so far: tool name → the result text. */
  results: Map<string, string>;
  /** Steering notes delivered to the model (text after the `[Steering from …]` marker). */
  steering: string[];
  /** Names of the tools the model was given. */
  tools: string[];
}

/** One scripted answer. */
export interface ScriptedAnswer {
  text: string;
  toolCalls?: { id: string; name: string; args: Record<string, unknown> }[];
}

function view(options: CallOptions): PromptView {
  const out: PromptView = { user: [], results: new Map(), steering: [], tools: [] };
  out.tools = (options.tools ?? []).map((t) => t.name);
  for (const message of options.prompt) {
    if (message.role === "user")
      for (const part of message.content) {
        if (part.type !== "text") continue;
        const steer = /^\[Steering from [^\]]+\] ([\s\S]*)$/.exec(part.text);
        if (steer) out.steering.push(steer[1] ?? "");
        else out.user.push(part.text);
      }
    if (message.role === "tool")
      for (const part of message.content)
        if (part.type === "tool-result")
          out.results.set(
            part.toolName,
            part.output.type === "text" || part.output.type === "error-text"
              ? part.output.value
              : JSON.stringify(part.output),
          );
  }
  return out;
}

/** An AI SDK language model whose answer is `script(prompt)`. */
export function scripted(
  modelId: string,
  script: (prompt: PromptView) => ScriptedAnswer,
): MockLanguageModelV3 {
  let calls = 0;
  return new MockLanguageModelV3({
    provider: "scripted",
    modelId,
    doGenerate: (options) => {
      const answer = script(view(options));
      const words = answer.text.split(/\s+/).length;
      calls += 1;
      return Promise.resolve({
        content: [
          { type: "text" as const, text: answer.text },
          ...(answer.toolCalls ?? []).map((c) => ({
            type: "tool-call" as const,
            toolCallId: c.id,
            toolName: c.name,
            input: JSON.stringify(c.args),
          })),
        ],
        finishReason: { unified: answer.toolCalls ? "tool-calls" : "stop", raw: undefined },
        usage: {
          inputTokens: {
            total: JSON.stringify(options.prompt).length >> 2,
            noCache: undefined,
            cacheRead: undefined,
            cacheWrite: undefined,
          },
          outputTokens: { total: words, text: words, reasoning: undefined },
        },
        response: { id: `${modelId}-${calls}`, modelId },
        warnings: [],
      });
    },
  });
}
