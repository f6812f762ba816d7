/**
 * Child runs: a compiled graph used as a node (or invoked from node code) runs as a child run of
 * the calling task, with a deterministic run id, its own checkpoint stream and the namespace
 * `[...parent, node]`. A re-run of the parent task finds the child's checkpoint and continues it.
 */
import type { Schema } from "../channels.ts";
import type { RunRecord } from "../checkpoint/types.ts";
import { CancelledError, InvalidInputError } from "../errors.ts";
import { childRunIdFor } from "../ids.ts";
import type { NodeSpec } from "../graph/state-graph.ts";
import type { RunResult } from "../types.ts";
import type { CompiledGraph } from "./compiled.ts";
import type { TaskRun } from "./context.ts";
import { loadValues, runStream } from "./run.ts";
import { ChildPaused, setChildRunner } from "./task-runner.ts";

/**
 * Runs `graph` as a child run of the task `parent`. Returns the child's result when it finished;
 * throws {@link ChildPaused} (and marks the parent task paused) when it paused.
 */
export async function runChild(
  graph: CompiledGraph<Schema>,
  input: unknown,
  parent: TaskRun,
  _name: string,
): Promise<RunResult> {
  const pexec = parent.exec;
  const saver = pexec.saver;
  const runId = childRunIdFor(pexec.runId, parent.task.id, parent.childIndex++);
  const namespace = [...pexec.namespace, parent.task.node];
  const exec = pexec.child({
    runId,
    stream: runId,
    namespace,
    path: [
      ...pexec.path,
      {
        runId: pexec.runId,
        graph: pexec.graphName,
        node: parent.task.node,
        taskId: parent.task.id,
      },
    ],
    graphName: graph.name,
    determinism: graph.determinism,
    schema: graph.runtime.shape.schema,
  });
  const existing = await saver.getRun(runId);
  const result = (
    status: RunResult["status"],
    values: Record<string, unknown>,
    checkpointId: string | null,
  ): RunResult => ({
    threadId: pexec.threadId,
    runId,
    status,
    values,
    interrupts: [],
    checkpointId: checkpointId as RunResult["checkpointId"],
  });
  if (existing?.status === "cancelled") return result("cancelled", {}, null);
  if (existing?.status === "done") {
    // The parent task re-ran after its child finished: replay the child's final state.
    const head = await saver.getCheckpoint(pexec.threadId, runId);
    return result("done", await loadValues(saver, graph.runtime.shape, head), head?.id ?? null);
  }
  const now = new Date().toISOString();
  const run: RunRecord = existing
    ? { ...existing, status: "running", updatedAt: now }
    : {
        runId,
        threadId: pexec.threadId,
        parentRunId: pexec.runId,
        parentTaskId: parent.task.id,
        graph: graph.name,
        namespace,
        stream: runId,
        status: "running",
        createdAt: now,
        updatedAt: now,
        error: null,
        options: null,
      };
  await saver.putRun(run);
  const own = graph.selectorsFor(null, namespace.length);
  const { outcome, state } = await runStream({
    graph: graph.runtime,
    exec,
    selectors: {
      before: [...own.before, ...pexec.runSelectors.before],
      after: [...own.after, ...pexec.runSelectors.after],
    },
    input: existing ? undefined : childInput(graph, input),
    run,
  });
  switch (outcome.status) {
    case "done":
      return result("done", state.values, state.head.id);
    case "interrupted":
      parent.childPaused = true;
      throw new ChildPaused();
    case "cancelled":
      throw new CancelledError("the child run was cancelled");
    case "error":
      throw outcome.error;
  }
}

function childInput(graph: CompiledGraph<Schema>, input: unknown): Record<string, unknown> {
  if (typeof input !== "object" || input === null || Array.isArray(input))
    throw new InvalidInputError(`Subgraph "${graph.name}" needs an object input of its channels.`, {
      graph: graph.name,
    });
  const schema = graph.runtime.shape.schema;
  return Object.fromEntries(Object.entries(input).filter(([key]) => key in schema));
}

/**
 * The parent update of a finished child: the keys the parent's schema has. For an append channel
 * only what the child appended is returned, since the child started from the parent's list.
 */
function toParentUpdate(
  values: Record<string, unknown>,
  input: unknown,
  parentSchema: Schema,
): Record<string, unknown> {
  const given = (typeof input === "object" && input !== null ? input : {}) as Record<
    string,
    unknown
  >;
  const update: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    const channel = parentSchema[key];
    if (!channel) continue;
    if (channel.kind === "append" && Array.isArray(value)) {
      const before = Array.isArray(given[key]) ? (given[key] as unknown[]).length : 0;
      if (value.length > before) update[key] = value.slice(before);
    } else update[key] = value;
  }
  return update;
}

setChildRunner(async (spec: NodeSpec, input: unknown, run: TaskRun) => {
  const graph = spec.run as CompiledGraph<Schema>;
  const outcome = await runChild(graph, input, run, spec.name);
  if (outcome.status !== "done") return undefined;
  return toParentUpdate(outcome.values, input, run.exec.schema);
});
