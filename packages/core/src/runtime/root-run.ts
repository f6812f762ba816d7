/**
 * One call on a root run: create the thread if needed, refuse or cancel a pending pause for plain
 * input, start or continue the run, and shape its {@link RunResult}.
 */
import type { Schema, StateOf, UpdateOf } from "../channels.ts";
import type { Checkpointer, RunRecord } from "../checkpoint/types.ts";
import { MissingCheckpointerError } from "../errors.ts";
import type { CheckpointId, RunId, ThreadId } from "../ids.ts";
import type { RunResult } from "../types.ts";
import type { CompiledGraph, RunOptions } from "./compiled.ts";
import type { EventSink } from "./events.ts";
import { Execution } from "./execution.ts";
import { toPublicInterrupt } from "./interrupt-records.ts";
import { guardPending, newRootRun, runStream } from "./run.ts";
import { parseSelectors } from "./selectors.ts";

/** A signal that never aborts, shared by runs without one (creating one per run shows in profiles). */
const NEVER_ABORTED = new AbortController().signal;

/** Runs one call of a root run while the caller holds the thread's lease. */
export async function runRoot<S extends Schema>(
  graph: CompiledGraph<S>,
  saver: Checkpointer,
  durable: boolean,
  threadId: ThreadId,
  input: UpdateOf<S> | null,
  options: RunOptions,
  sink: EventSink,
): Promise<RunResult<StateOf<S>>> {
  const actor = options.actor ?? "anonymous";
  let thread = durable ? await saver.getThread(threadId) : undefined;
  if (durable && !thread) {
    const now = new Date().toISOString();
    thread = {
      threadId,
      tenant: options.tenant ?? null,
      metadata: options.metadata ?? {},
      createdAt: now,
      updatedAt: now,
    };
    await saver.putThread(thread);
  }
  const head = durable ? await saver.getCheckpoint(threadId, "") : undefined;
  const runOptions =
    options.interruptBefore || options.interruptAfter
      ? {
          interruptBefore: options.interruptBefore ?? [],
          interruptAfter: options.interruptAfter ?? [],
        }
      : null;
  let run: RunRecord;
  let streamInput: Record<string, unknown> | undefined;
  if (input === null || input === undefined) {
    const previous = head && !options.checkpointId ? await saver.getRun(head.runId) : undefined;
    run = previous
      ? { ...previous, status: "running", updatedAt: new Date().toISOString() }
      : newRootRun(threadId, graph.name, runOptions);
    streamInput = head ? undefined : {};
  } else {
    const pending = durable ? await saver.getThreadInterrupts(threadId, "pending") : [];
    await guardPending(saver, threadId, pending, options.onPending ?? "error", actor);
    run = newRootRun(threadId, graph.name, runOptions, options.runId as RunId | undefined);
    streamInput = input;
  }
  if (options.checkpointId && run.runId === head?.runId)
    run = newRootRun(threadId, graph.name, runOptions);
  await saver.putRun(run);
  const controller = options.signal ?? NEVER_ABORTED;
  const exec = new Execution({
    threadId,
    runId: run.runId,
    stream: "",
    namespace: [],
    path: [],
    graphName: graph.name,
    schema: graph.runtime.shape.schema,
    tenant: thread?.tenant ?? null,
    saver,
    durable,
    determinism: graph.determinism,
    signal: controller,
    sink,
    steering: durable ? await saver.listSteering(threadId) : [],
    lineage: [run.runId],
    runSelectors: {
      before: parseSelectors(run.options?.interruptBefore, 0),
      after: parseSelectors(run.options?.interruptAfter, 0),
    },
  });
  const { outcome, state } = await runStream({
    graph: graph.runtime,
    exec,
    selectors: graph.selectorsFor(run, 0),
    input: streamInput,
    fromCheckpointId: options.checkpointId as CheckpointId | undefined,
    head,
    run,
  });
  // Without a checkpointer nothing was recorded, and a pause cannot be: asking for one is a
  // configuration error of the caller, raised as such rather than returned as a failed run.
  if (!durable && outcome.status === "error" && outcome.error instanceof MissingCheckpointerError)
    throw outcome.error;
  const pending =
    outcome.status === "interrupted" ? await saver.getThreadInterrupts(threadId, "pending") : [];
  const result: RunResult<StateOf<S>> = {
    threadId,
    runId: run.runId,
    status: outcome.status,
    values: state.values as StateOf<S>,
    interrupts: pending.map(toPublicInterrupt),
    checkpointId: durable ? state.head.id : null,
  };
  if (outcome.status === "error") {
    const err = outcome.error;
    result.error = {
      name: err instanceof Error ? err.name : "Error",
      message: err instanceof Error ? err.message : String(err),
      ...(err && typeof err === "object" && "code" in err && typeof err.code === "string"
        ? { code: err.code }
        : {}),
      ...(outcome.failedNode ? { node: outcome.failedNode } : {}),
    };
  }
  return result;
}
