/**
 * Interrupt rows: building static ones, the public view of a stored row, and its stream event.
 */
import type { StoredInterrupt, TaskSpec } from "../checkpoint/types.ts";
import { interruptIdFor, type CheckpointId } from "../ids.ts";
import type { Interrupt } from "../types.ts";
import type { Execution } from "./execution.ts";

/** Emits an `interrupt` event for a stored interrupt. */
export function emitInterrupt(exec: Execution, record: StoredInterrupt): void {
  exec.sink.push({
    type: "interrupt",
    namespace: [...record.namespace],
    interrupt: toPublicInterrupt(record),
  });
}

/** The public {@link Interrupt} view of a stored row. */
export function toPublicInterrupt(record: StoredInterrupt): Interrupt {
  return {
    id: record.id,
    runId: record.runId,
    threadId: record.threadId,
    node: record.node,
    taskId: record.taskId,
    namespace: record.namespace,
    order: record.order,
    payload: record.payload,
    kind: record.kind,
    status: record.status,
    checkpointId: record.checkpointId,
    createdAt: record.createdAt,
  };
}

/** A `before`/`after` interrupt row for a task. */
export function staticInterrupt(
  exec: Execution,
  kind: "before" | "after",
  checkpointId: CheckpointId,
  task: TaskSpec,
): StoredInterrupt {
  return {
    id: interruptIdFor(exec.threadId, exec.namespace, task.id, kind, 0),
    runId: exec.runId,
    threadId: exec.threadId,
    node: task.node,
    taskId: task.id,
    namespace: [...exec.namespace],
    order: 0,
    payload: { kind, node: task.node },
    kind,
    status: "pending",
    checkpointId,
    createdAt: new Date().toISOString(),
    stream: exec.stream,
    slot: kind,
    revision: 0,
    path: [
      ...exec.path,
      { runId: exec.runId, graph: exec.graphName, node: task.node, taskId: task.id },
    ],
    graph: exec.graphName,
    tenant: exec.tenant,
    deadline: null,
    onTimeout: null,
    answerSchema: null,
  };
}
