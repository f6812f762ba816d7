/**
 * Spans of the prebuilt agent: one per model call (with token usage) and one per tool call
 * (with the reviewer's decision).
 */
import type { AssistantMessage, ToolCall, ToolMessage } from "./messages.ts";
import type { TaskContext } from "../graph/node.ts";
import { inSpan, outcomeOn, SpanAttributes, SpanNames } from "../telemetry/tracing.ts";

function taskAttributes(ctx: TaskContext) {
  return {
    [SpanAttributes.threadId]: ctx.threadId,
    [SpanAttributes.runId]: ctx.runId,
    [SpanAttributes.taskId]: ctx.taskId,
    [SpanAttributes.node]: ctx.node,
  };
}

/** Spans one model call; usage, response id and model go on the span. */
export function traceModelCall(
  ctx: TaskContext,
  fn: () => Promise<AssistantMessage>,
): Promise<AssistantMessage> {
  return inSpan(SpanNames.model, taskAttributes(ctx), fn, (message, span) => {
    if (message.usage?.inputTokens !== undefined)
      span.setAttribute(SpanAttributes.inputTokens, message.usage.inputTokens);
    if (message.usage?.outputTokens !== undefined)
      span.setAttribute(SpanAttributes.outputTokens, message.usage.outputTokens);
    if (message.id !== undefined) span.setAttribute(SpanAttributes.responseId, message.id);
    if (message.model !== undefined) span.setAttribute(SpanAttributes.responseModel, message.model);
  });
}

/** Spans one tool call, from approval to result; its status and decision go on the span. */
export function traceToolCall(
  ctx: TaskContext,
  call: ToolCall,
  fn: () => Promise<ToolMessage>,
): Promise<ToolMessage> {
  return inSpan(
    SpanNames.tool,
    {
      ...taskAttributes(ctx),
      [SpanAttributes.toolName]: call.name,
      [SpanAttributes.toolCallId]: call.id,
    },
    fn,
    (message, span) => {
      outcomeOn(span, message.status);
      if (message.review) {
        span.setAttribute(SpanAttributes.decision, message.review.decision);
        span.setAttribute(SpanAttributes.interruptId, message.review.interruptId);
        if (message.review.actor) span.setAttribute(SpanAttributes.actor, message.review.actor);
      }
    },
  );
}
