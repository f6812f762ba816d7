/**
 * Interrupt rows as others see them: the public view of a stored row (its stream event is
 * `emitInterrupt` in engine/events.ts).
 */
import { approvalView } from "../checkpoint/approvals.ts";
import type { StoredInterrupt } from "../checkpoint/types.ts";
import type { Interrupt } from "../types.ts";
import { escalationView } from "./ladder.ts";

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
    ...(record.policy ? { approval: approvalView(record.policy, record.approvals) } : {}),
    ...(record.ladder ? { escalation: escalationView(record) } : {}),
  };
}
