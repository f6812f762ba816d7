/**
 * The runtime's span hooks: one function per hook point, so the runtime's own files change by a
 * line each.
 */
import type { RunRecord, StoredInterrupt, TaskSpec } from "../checkpoint/types.ts";
import type { RunId, ThreadId } from "../ids.ts";
import {
  inSpan,
  markSpan,
  tracingOn,
  outcomeOn,
  runAttributes,
  SpanAttributes,
  SpanNames,
} from "./tracing.ts";

/** What a run's spans are labelled with; the engine's `Execution` is one. */
export interface TracedRun {
  readonly threadId: ThreadId;
  readonly runId: RunId;
  readonly namespace: readonly string[];
}

/** Spans one run (root or child) from start to its pause or end. */
export function traceRun<T extends { outcome: { status: string; error?: unknown } }>(
  run: RunRecord,
  fn: () => Promise<T>,
): Promise<T> {
  // Without a tracer, no attributes are built: these hooks run for every run, step and task.
  if (!tracingOn()) return fn();
  return inSpan(SpanNames.run, runAttributes(run), fn, (r, span) =>
    outcomeOn(span, r.outcome.status, r.outcome.error),
  );
}

/** Spans the tasks of one superstep; its tasks' spans are children. */
export function traceStep<T>(exec: TracedRun, step: number, fn: () => Promise<T>): Promise<T> {
  if (!tracingOn()) return fn();
  return inSpan(
    SpanNames.step,
    {
      [SpanAttributes.threadId]: exec.threadId,
      [SpanAttributes.runId]: exec.runId,
      [SpanAttributes.namespace]: exec.namespace.join("/"),
      [SpanAttributes.step]: step,
    },
    fn,
  );
}

/** Spans one task's execution; node code's model and tool spans are its children. */
export function traceTask<T extends { kind: string; error?: unknown }>(
  exec: TracedRun,
  task: TaskSpec,
  fn: () => Promise<T>,
): Promise<T> {
  if (!tracingOn()) return fn();
  return inSpan(
    SpanNames.task,
    {
      [SpanAttributes.threadId]: exec.threadId,
      [SpanAttributes.runId]: exec.runId,
      [SpanAttributes.taskId]: task.id,
      [SpanAttributes.node]: task.node,
      [SpanAttributes.namespace]: exec.namespace.join("/"),
    },
    fn,
    (outcome, span) => outcomeOn(span, outcome.kind, outcome.error),
  );
}

/** Marks an interrupt raised by the current task. */
export function traceInterrupt(record: StoredInterrupt): void {
  markSpan(SpanNames.interrupt, {
    [SpanAttributes.threadId]: record.threadId,
    [SpanAttributes.runId]: record.runId,
    [SpanAttributes.taskId]: record.taskId,
    [SpanAttributes.node]: record.node,
    [SpanAttributes.interruptId]: record.id,
    [SpanAttributes.namespace]: record.namespace.join("/"),
  });
}

/** Spans the atomic application of answers to pending interrupts. */
export function traceAnswer<T extends { ok: boolean }>(
  threadId: string,
  answered: readonly StoredInterrupt[],
  actor: string,
  fn: () => Promise<T>,
): Promise<T> {
  return inSpan(
    SpanNames.answer,
    {
      [SpanAttributes.threadId]: threadId,
      [SpanAttributes.actor]: actor,
      [SpanAttributes.interruptIds]: answered.map((i) => i.id),
      ...(answered.length === 1 && answered[0]
        ? {
            [SpanAttributes.interruptId]: answered[0].id,
            [SpanAttributes.runId]: answered[0].runId,
          }
        : {}),
    },
    fn,
    (outcome, span) =>
      span.setAttribute(SpanAttributes.outcome, outcome.ok ? "applied" : "refused"),
  );
}
