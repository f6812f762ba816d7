/**
 * `invoke(null)` at a static pause. A thread paused only by `interruptBefore`/`interruptAfter`
 * selectors waits for nobody's answer, so plain continuation continues it (as LangGraph users
 * expect): its static interrupts are answered (recorded in the audit log with the caller as the
 * actor) and the run goes on. Where a dynamic interrupt is pending, a person's answer is needed:
 * `invoke(null)` continues nothing and returns the pause as it stands.
 */
import type { Schema, StateOf } from "../channels.ts";
import type { Checkpointer } from "../checkpoint/types.ts";
import { Command } from "../graph/command.ts";
import { validateThreadId } from "../ids.ts";
import type { RunResult } from "../types.ts";
import { resumeWith } from "./answer-run.ts";
import type { CompiledGraph, RunOptions } from "./compiled.ts";
import type { EventSink } from "./events.ts";

/** Continues a thread from a caller's `invoke(null)` / `stream(null)`. */
export async function continueFromCaller<S extends Schema>(
  graph: CompiledGraph<S>,
  saver: Checkpointer,
  options: RunOptions,
  sink: EventSink,
  continueRun: (options: RunOptions, sink: EventSink) => Promise<RunResult<StateOf<S>>>,
): Promise<RunResult<StateOf<S>>> {
  const threadId = validateThreadId(options.threadId);
  const pending = await saver.getThreadInterrupts(threadId, "pending");
  if (pending.length === 0 || pending.some((i) => i.kind === "dynamic"))
    return continueRun(options, sink);
  const proceed = Command.resumeMap(
    Object.fromEntries(pending.map((i) => [i.id, null])),
    options.actor !== undefined ? { actor: options.actor } : {},
  );
  return resumeWith(graph, continueRun, threadId, proceed, null, options, sink);
}
