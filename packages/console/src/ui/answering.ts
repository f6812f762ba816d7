/**
 * Sending what the decision screen decided: the answer, the note to the chosen run, and what a
 * refusal means — as plain functions over the client, so the screen only keeps state.
 */
import {
  NotAllowedApiError,
  ReinApiError,
  type InterruptListItem,
  type ReinClient,
  type RunResult,
} from "@rein/client";
import { refusalText } from "./approval.ts";
import { conflictInfo, type ConflictInfo } from "./screens/Conflict.tsx";
import { describeError } from "./errors.ts";
import type { SteerTarget } from "./parts/Steering.tsx";

/** The interrupt an answer targets, exactly. */
function targetOf(item: InterruptListItem) {
  return { runId: item.runId, namespace: item.namespace, interruptId: item.id };
}

/**
 * Answers `item`. A note for the asking run goes with the answer (scoped to the question); a
 * note for another run of the tree is recorded on that run first, so it is there when it goes on.
 */
export async function sendAnswer(
  client: ReinClient,
  item: InterruptListItem,
  answer: unknown,
  note: { text: string; to: SteerTarget } | null,
): Promise<RunResult> {
  const elsewhere = note !== null && !note.to.asking;
  if (elsewhere)
    await client.steer(item.threadId, {
      target: { runId: note.to.runId, namespace: note.to.namespace },
      text: note.text,
    });
  return client.resume(item.threadId, {
    target: targetOf(item),
    resume: answer,
    ...(note && !elsewhere ? { steering: note.text } : {}),
    expectedCheckpointId: item.checkpointId,
  });
}

/** Records a note without answering: on the question for the asking run, else on the run. */
export function steerOnly(
  client: ReinClient,
  item: InterruptListItem,
  note: { text: string; to: SteerTarget },
): Promise<unknown> {
  return client.steer(item.threadId, {
    target: note.to.asking
      ? targetOf(item)
      : { runId: note.to.runId, namespace: note.to.namespace },
    text: note.text,
  });
}

/** What a refused answer means to the screen. */
export type Refusal =
  | { kind: "conflict"; info: ConflictInfo }
  /** 403 `not_allowed`: the approval policy refused this reviewer; nothing was stored. */
  | { kind: "refused"; text: string }
  | { kind: "error"; text: string };

/**
 * A refused answer: the conflict (with the thread's head, as the thread screen shows it), the
 * policy's refusal, or the error in words.
 */
export async function refusal(
  client: ReinClient,
  item: InterruptListItem,
  error: unknown,
): Promise<Refusal> {
  if (error instanceof NotAllowedApiError)
    return { kind: "refused", text: refusalText(error.rule, error.message) };
  if (!(error instanceof ReinApiError && error.status === 409))
    return { kind: "error", text: describeError(error) };
  // The 409's head is the answered run's; the reviewer compares with the thread screen's.
  const head = await client.getThread(item.threadId).then(
    (t) => t.headCheckpointId,
    () => null,
  );
  return { kind: "conflict", info: conflictInfo(error, item, head) };
}
