/**
 * OpenTelemetry spans for runs, supersteps, tasks, model calls, tool calls, interrupts and
 * answers. Spans go through `@opentelemetry/api`: a no-op unless the application registers an
 * SDK (a tracer provider), so tracing costs nothing when nobody listens. The runtime calls in
 * here at a handful of points; the span names and attributes live in this one module.
 */
import {
  ProxyTracerProvider,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
} from "@opentelemetry/api";

/** Span names, stable: dashboards and tests select on them. */
export const SpanNames = {
  run: "rein.run",
  step: "rein.step",
  task: "rein.task",
  model: "rein.model",
  tool: "rein.tool",
  interrupt: "rein.interrupt",
  answer: "rein.answer",
} as const;

/** Attribute keys, stable. Token usage follows the GenAI semantic conventions (`gen_ai.*`). */
export const SpanAttributes = {
  threadId: "rein.thread_id",
  runId: "rein.run_id",
  parentRunId: "rein.parent_run_id",
  graph: "rein.graph",
  namespace: "rein.namespace",
  step: "rein.step",
  taskId: "rein.task_id",
  node: "rein.node",
  interruptId: "rein.interrupt_id",
  interruptIds: "rein.interrupt_ids",
  actor: "rein.actor",
  outcome: "rein.outcome",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  decision: "rein.tool.decision",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  responseId: "gen_ai.response.id",
  responseModel: "gen_ai.response.model",
} as const;

/** The runtime's pause signals (an interrupt, a paused child run) travel as exceptions. */
function isPause(error: unknown): boolean {
  return (
    error instanceof Error && (error.name === "GraphInterrupt" || error.name === "ChildPaused")
  );
}

/** The API's no-op provider: what the global proxy delegates to until an SDK registers. */
const noopProvider = new ProxyTracerProvider().getDelegate();

/**
 * False while no SDK is registered. Spans are skipped then rather than made as no-ops: even a
 * no-op span costs about a microsecond and a context switch, paid several times per superstep.
 * Checked per call, so an SDK registered later is picked up at once.
 */
export function tracingOn(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider && provider.getDelegate() === noopProvider);
}

function tracer() {
  // Looked up per span, so a provider registered after this module loaded is still used.
  return trace.getTracer("@rein/core", "0.1.0");
}

/**
 * Runs `fn` inside an active span (spans started within are its children), records a thrown
 * error on it, and ends it. `after` adds attributes from the result.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: () => Promise<T>,
  after?: (result: T, span: Span) => void,
): Promise<T> {
  if (!tracingOn()) return fn();
  return tracer().startActiveSpan(name, { attributes }, async (span) => {
    try {
      const result = await fn();
      after?.(result, span);
      return result;
    } catch (error) {
      if (isPause(error)) {
        // An interrupt unwinding node code is a pause, not a failure.
        span.setAttribute(SpanAttributes.outcome, "paused");
        throw error;
      }
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: error instanceof Error ? error.message : String(error),
      });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Marks a span failed when an outcome says `error` (outcomes are returned, not thrown). */
export function outcomeOn(span: Span, outcome: string, error?: unknown): void {
  span.setAttribute(SpanAttributes.outcome, outcome);
  if (outcome === "error")
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : "failed",
    });
}

/** A zero-length span marking a moment (an interrupt raised) under the active span. */
export function markSpan(name: string, attributes: Attributes): void {
  if (tracingOn()) tracer().startSpan(name, { attributes }).end();
}

/** Attributes naming a run. */
export function runAttributes(run: {
  threadId: string;
  runId: string;
  graph: string;
  namespace: readonly string[];
  parentRunId?: string | null;
}): Attributes {
  return {
    [SpanAttributes.threadId]: run.threadId,
    [SpanAttributes.runId]: run.runId,
    [SpanAttributes.graph]: run.graph,
    [SpanAttributes.namespace]: run.namespace.join("/"),
    ...(run.parentRunId ? { [SpanAttributes.parentRunId]: run.parentRunId } : {}),
  };
}
