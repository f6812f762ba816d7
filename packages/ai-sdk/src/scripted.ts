/**
 * Test support: the AI SDK's own mock language model (`ai/test`), scripted turn by turn and
 * recording what it was sent. On `ai` 7 it is `MockLanguageModelV4` (the provider spec of that
 * major), on `ai` 6 `MockLanguageModelV3`; the parts they take are the same.
 */
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3StreamPart,
} from "@ai-sdk/provider";
import type { RecordedRequest, ScriptedTurn } from "@rein/core/testing/agent";
import * as aiTest from "ai/test";
import aiPackage from "ai/package.json" with { type: "json" };

/** The `ai` package the tests run on (`ai@6.x`, or `ai@7.x` in the second-major project). */
export const client = { name: "ai", version: aiPackage.version };

type MockClass = typeof aiTest.MockLanguageModelV3;
const MockLanguageModel: MockClass =
  (aiTest as unknown as Record<string, MockClass | undefined>).MockLanguageModelV4 ??
  aiTest.MockLanguageModelV3;

/** What one scripted call answers: whole content (generate) and the stream parts (stream). */
export interface MockAnswer {
  content: LanguageModelV3Content[];
  stream: LanguageModelV3StreamPart[];
  finish?: "stop" | "tool-calls" | "length" | "content-filter" | "error";
  /** The stream stops after its parts without a `finish` part (`"truncated"`) or breaks (`"dropped"`). */
  end?: "truncated" | "dropped";
  /** Never answer until the call's abort signal fires; then reject, as a provider's fetch does. */
  hang?: boolean;
}

function abortError(): Error {
  return new DOMException("This operation was aborted", "AbortError");
}

function hangUntilAborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_, reject) => signal?.addEventListener("abort", () => reject(abortError())));
}

/** Token usage in the provider spec's shape. */
export function usage(turn: Pick<ScriptedTurn, "usage">) {
  return {
    inputTokens: {
      total: turn.usage?.inputTokens,
      noCache: undefined,
      cacheRead: undefined,
      cacheWrite: undefined,
    },
    outputTokens: { total: turn.usage?.outputTokens, text: undefined, reasoning: undefined },
  };
}

/** The answer of a scripted turn: its text (streamed word by word) and its tool calls. */
export function answerOf(turn: ScriptedTurn): MockAnswer {
  const calls = (turn.toolCalls ?? []).map((c): LanguageModelV3Content => ({
    type: "tool-call",
    toolCallId: c.id,
    toolName: c.name,
    input: JSON.stringify(c.args),
  }));
  const provider = providerParts(turn);
  calls.push(...provider);
  const words = (turn.text ?? "").split(/(?<= )/);
  // A provider's failure mid-answer is an `error` part; a cut answer stops with "length".
  const failed: LanguageModelV3StreamPart[] =
    turn.fail === "error"
      ? [{ type: "error", error: { type: "server_error", message: "The server had an error." } }]
      : [];
  return {
    content: [...(turn.text ? [{ type: "text" as const, text: turn.text }] : []), ...calls],
    stream: [
      { type: "text-start", id: "t" },
      ...words.map((w): LanguageModelV3StreamPart => ({ type: "text-delta", id: "t", delta: w })),
      ...failed,
      { type: "text-end", id: "t" },
      ...(calls as LanguageModelV3StreamPart[]),
    ],
    finish:
      turn.fail === "error"
        ? "error"
        : turn.fail === "cut"
          ? "length"
          : turn.toolCalls
            ? "tool-calls"
            : "stop",
    ...(turn.hang ? { hang: true } : {}),
    ...(turn.fail === "truncated" || turn.fail === "dropped" ? { end: turn.fail } : {}),
  };
}

/**
 * A call the provider runs itself, as a provider reports it: the call and its approval request,
 * or (once approved) the call and its result.
 */
function providerParts(turn: ScriptedTurn): LanguageModelV3Content[] {
  const p = turn.providerCall;
  if (!p) return [];
  const call: LanguageModelV3Content = {
    type: "tool-call",
    toolCallId: p.id,
    toolName: p.name,
    input: JSON.stringify(p.args),
    providerExecuted: true,
    dynamic: true,
  };
  if (p.output === undefined)
    return [call, { type: "tool-approval-request", approvalId: p.approvalId, toolCallId: p.id }];
  const result: LanguageModelV3Content = {
    type: "tool-result",
    toolCallId: p.id,
    toolName: p.name,
    result: p.output,
    dynamic: true,
  };
  return [call, result];
}

/**
 * The AI SDK's mock model answering `answers` in order (an empty text once they run out), with
 * `usage` per answer; `requests()` has what each call was sent (tool names, the prompt as JSON).
 */
export function scriptedModel(
  answers: readonly MockAnswer[],
  usages: readonly ScriptedTurn[] = [],
) {
  const requests: RecordedRequest[] = [];
  const prompts: LanguageModelV3CallOptions["prompt"][] = [];
  let next = 0;
  const take = (options: LanguageModelV3CallOptions) => {
    requests.push({
      tools: (options.tools ?? []).map((t) => t.name),
      body: JSON.stringify(options.prompt),
    });
    prompts.push(options.prompt);
    const index = next++;
    const answer = answers[index] ?? { content: [], stream: [], finish: "stop" as const };
    const finishReason = { unified: answer.finish ?? "stop", raw: answer.finish ?? "stop" };
    return { answer, id: `resp_${index}`, finishReason, usage: usage(usages[index] ?? {}) };
  };
  const model = new MockLanguageModel({
    doGenerate: (options) => {
      const { answer, id, finishReason, usage } = take(options);
      if (answer.hang) return hangUntilAborted(options.abortSignal);
      return Promise.resolve({
        content: answer.content,
        finishReason,
        usage,
        response: { id, modelId: "mock-model" },
        warnings: [],
      });
    },
    doStream: (options) => {
      const { answer, id, finishReason, usage } = take(options);
      if (answer.hang) return hangUntilAborted(options.abortSignal);
      const parts: LanguageModelV3StreamPart[] = [
        { type: "stream-start", warnings: [] },
        { type: "response-metadata", id, modelId: "mock-model" },
        ...answer.stream,
        ...(answer.end ? [] : [{ type: "finish" as const, usage, finishReason }]),
      ];
      if (answer.end !== "dropped")
        return Promise.resolve({ stream: aiTest.convertArrayToReadableStream(parts) });
      // The connection goes away mid-body, as undici reports it.
      const stream = new ReadableStream<LanguageModelV3StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.error(new TypeError("terminated"));
        },
      });
      return Promise.resolve({ stream });
    },
  });
  return { model, requests: () => requests, prompts: () => prompts };
}
