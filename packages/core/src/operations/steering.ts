/**
 * Steering: an instruction recorded for a run, task or interrupt, read by node code of the next
 * execution in that scope through `ctx.steering`, with its line in the audit log.
 */
import { hasCapability, requireCapability } from "../checkpoint/capabilities.ts";
import { randomUUID } from "node:crypto";
import type { RunRecord } from "../checkpoint/types.ts";
import { InvalidInputError } from "../errors.ts";
import { asInterruptId, asRunId, asTaskId } from "../ids.ts";
import { ROOT_STREAM } from "../keys.ts";
import type { ResumeTarget } from "../graph/command.ts";
import { selectTarget, staleError, unmatchedTarget } from "./target.ts";
import type { SteeringRecord } from "../types.ts";
import type { ThreadSession } from "../thread/session.ts";

/**
 * Refuses a steering target that no execution will read (SPEC §3, stale targets): a finished
 * run, or a target narrowed to an interrupt or a task that has no pending interrupt — one
 * answered, cancelled or superseded is stale, one its run never asked matches nothing. Nothing
 * is recorded either way.
 *
 * @throws StaleTargetError / NoMatchingTargetError with the latest metadata.
 */
export async function checkSteeringTarget(
  session: ThreadSession,
  run: RunRecord,
  target: ResumeTarget,
): Promise<void> {
  if (run.status === "done" || run.status === "cancelled" || run.status === "error")
    throw await staleError(
      session,
      run.runId,
      `Run ${run.runId} is ${run.status}; there is no next execution to steer.`,
    );
  if (target.interruptId === undefined && target.taskId === undefined) return;
  const pending = selectTarget(await session.interruptsOfRun(run.runId, "pending"), target);
  if (pending.length === 0) throw await unmatchedTarget(session, target, () => session.pending());
}

/**
 * Records a steering instruction (and its audit line) for a target, by the session's actor.
 *
 * @throws InvalidInputError for empty text.
 */
export async function recordSteering(
  session: ThreadSession,
  target: ResumeTarget,
  text: string,
  interruptId?: string,
): Promise<SteeringRecord> {
  if (typeof text !== "string" || text.trim() === "")
    throw new InvalidInputError("Steering text must be a non-empty string.");
  const runId = asRunId(target.runId);
  const run = await session.run(runId);
  const head = await session.head(run?.stream ?? ROOT_STREAM);
  const forInterrupt = target.interruptId ?? interruptId;
  const record: SteeringRecord = {
    id: `s_${randomUUID()}`,
    threadId: session.threadId,
    runId,
    ...(target.taskId !== undefined ? { taskId: asTaskId(target.taskId) } : {}),
    ...(forInterrupt !== undefined ? { interruptId: asInterruptId(forInterrupt) } : {}),
    namespace: [...target.namespace],
    text,
    actor: session.actor,
    checkpointId: head?.id ?? null,
    createdAt: session.now(),
  };
  await requireCapability(session.store, "steering", "steering").appendSteering(record);
  // A store that keeps no audit trail of its own (no `auditChain`) has no line to add it to.
  if (!hasCapability(session.store, "auditChain")) return record;
  await session.store.appendAudit({
    id: `a_${randomUUID()}`,
    threadId: session.threadId,
    runId: record.runId,
    ...(record.interruptId ? { interruptId: record.interruptId } : {}),
    action: "steer",
    actor: session.actor,
    data: { steeringId: record.id, text },
    createdAt: record.createdAt,
  });
  return record;
}
