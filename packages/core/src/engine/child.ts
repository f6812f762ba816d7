/**
 * Child runs: a compiled graph used as a node (or invoked from node code) runs as a child run of
 * the calling task, with a deterministic run id, its own checkpoint stream and the namespace
 * `[...parent, node]`. A re-run of the parent task finds the child's checkpoint and continues it.
 */
import type { Schema } from "../channels.ts";
import type { RunRecord } from "../checkpoint/types.ts";
import { CancelledError, InvalidInputError } from "../errors.ts";
import type { GraphDefinition } from "../graph/definition.ts";
import type { NodeFn } from "../graph/node.ts";
import { childRunIdFor, type CheckpointId } from "../ids.ts";
import { selectorsFor } from "../interrupts/static.ts";
import { encodeStream } from "../keys.ts";
import type { RunResult } from "../types.ts";
import { ChildPaused, TaskRun } from "./context.ts";
import type { Execution } from "./execution.ts";
import { runStream } from "./stream.ts";

/**
 * Runs `graph` as a child run of the task `parent`. Returns the child's result when it finished;
 * throws {@link ChildPaused} (and marks the parent task paused) when it paused.
 */
export async function runChild(
  graph: GraphDefinition,
  input: unknown,
  parent: TaskRun,
): Promise<RunResult> {
  const pexec = parent.exec;
  const session = pexec.session;
  const runId = childRunIdFor(pexec.runId, parent.task.id, parent.childIndex++);
  const stream = encodeStream({ kind: "child", runId });
  const namespace = [...pexec.namespace, parent.task.node];
  const exec = pexec.child({
    runId,
    stream,
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
    schema: graph.schema,
  });
  const existing = await session.run(runId);
  const result = (
    status: RunResult["status"],
    values: Record<string, unknown>,
    checkpointId: CheckpointId | null,
  ): RunResult => ({
    threadId: pexec.threadId,
    runId,
    status,
    values,
    interrupts: [],
    pendingCount: 0,
    checkpointId,
  });
  if (existing?.status === "cancelled") return result("cancelled", {}, null);
  if (existing?.status === "done") {
    // The parent task re-ran after its child finished: replay the child's final state.
    const head = await session.head(stream);
    return result("done", await session.values(graph.schema, head), head?.id ?? null);
  }
  const run = childRunRow(exec, parent, existing);
  await session.store.putRun(run);
  const own = selectorsFor(graph, null, namespace.length);
  const { outcome, state } = await runStream({
    definition: graph,
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

/** The row of a child run, new or moved back to `running`. */
function childRunRow(exec: Execution, parent: TaskRun, existing: RunRecord | undefined): RunRecord {
  const now = exec.session.now();
  if (existing) return { ...existing, status: "running", updatedAt: now };
  return {
    runId: exec.runId,
    threadId: exec.threadId,
    parentRunId: parent.exec.runId,
    parentTaskId: parent.task.id,
    graph: exec.graphName,
    namespace: exec.namespace,
    stream: exec.stream,
    status: "running",
    createdAt: now,
    updatedAt: now,
    error: null,
    options: null,
  };
}

function childInput(graph: GraphDefinition, input: unknown): Record<string, unknown> {
  if (typeof input !== "object" || input === null || Array.isArray(input))
    throw new InvalidInputError(`Subgraph "${graph.name}" needs an object input of its channels.`, {
      graph: graph.name,
    });
  const schema = graph.schema;
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

/**
 * A compiled graph added with `addNode(name, compiled)`, as an ordinary node: it runs the graph as
 * a child run of the node's task and returns the child's final values as the parent's update.
 */
export function subgraphNode(graph: GraphDefinition): NodeFn<Schema, unknown> {
  return async (input, ctx) => {
    // The engine passes each node its TaskRun as `ctx`.
    if (!(ctx instanceof TaskRun))
      throw new InvalidInputError(`Subgraph "${graph.name}" runs only as a node of a graph.`);
    const outcome = await runChild(graph, input, ctx);
    if (outcome.status !== "done") return undefined;
    return toParentUpdate(outcome.values, input, ctx.exec.schema);
  };
}
