/**
 * Public record types shared by the runtime, the stores and the server.
 */
import type { CheckpointId, InterruptId, RunId, TaskId, ThreadId } from "./ids.ts";

/** How an interrupt came to be: an `interrupt()` call, or a static selector before/after a node. */
export type InterruptKind = "dynamic" | "before" | "after";

/** Lifecycle of an interrupt. Only `pending` ones can be answered. */
export type InterruptStatus = "pending" | "answered" | "cancelled" | "superseded";

/** One step of a run-tree path, root first. */
export interface RunPathEntry {
  runId: RunId;
  graph: string;
  node: string;
  taskId: TaskId;
}

/** A question the run asked a person (or a static pause). */
export interface Interrupt<Payload = unknown> {
  id: InterruptId;
  runId: RunId;
  threadId: ThreadId;
  node: string;
  taskId: TaskId;
  /** Subgraph namespace of the task: `[]` at the root, `["supervisor", "research"]` below. */
  namespace: string[];
  /** Index of the `interrupt()` call within its task run (0 for static interrupts). */
  order: number;
  payload: Payload;
  kind: InterruptKind;
  status: InterruptStatus;
  /** The checkpoint the paused task belongs to (the head when it paused). */
  checkpointId: CheckpointId;
  createdAt: string;
  /**
   * Who may answer and how many must agree, with the approvals recorded so far: present only
   * when an approval policy applies (see docs/governance.md).
   */
  approval?: InterruptApproval;
  /**
   * The escalation ladder (reminders, escalation, timeout) and the step it reached: present only
   * when the question was asked with `remind` or `escalate` (see docs/interrupts.md).
   */
  escalation?: InterruptEscalation;
}

/**
 * Who may answer a question: any listed subject, group or role (no lists: anyone who may
 * resume), how many distinct approvals apply the answer, and whether the person who started the
 * run may approve. Plain data, stored with the interrupt when it is raised.
 */
export interface Approvers {
  subjects?: readonly string[];
  groups?: readonly string[];
  roles?: readonly string[];
  /** Distinct approvals that apply the answer. Default 1. */
  count?: number;
  /** The run's requester may not answer. Default: true when `count` is 2 or more. */
  notRequester?: boolean;
}

/** One recorded approval: who, the digest of the payload they approved, and when. */
export interface ApprovalEntry {
  actor: string;
  /** `sha256:` and the hex digest of the payload's canonical JSON. */
  digest: string;
  at: string;
}

/** The approval state of an interrupt, as the queue and the API show it. */
export interface InterruptApproval {
  /** Distinct approvals that apply the answer. */
  required: number;
  /** Approvals recorded so far (the answer applies at `required`). */
  approvals: ApprovalEntry[];
  /** The policy, as resolved when the question was raised. */
  policy: Approvers & { count: number; notRequester: boolean };
}

/** Principals an escalation lets answer too: any subject, group or role listed. */
export interface EscalationTargets {
  subjects?: readonly string[];
  groups?: readonly string[];
  roles?: readonly string[];
}

/**
 * Where an interrupt's escalation ladder stands (`interrupt(payload, { remind, escalate,
 * timeout })`), as the queue and the API show it.
 */
export interface InterruptEscalation {
  /** `none` until the first step; `reminded` after a reminder; `escalated` after escalation. */
  stage: "none" | "reminded" | "escalated";
  /** When each reminder is (was) due, in order (ISO). */
  remindAt: string[];
  /** When the escalation is (was) due; `null` without an escalation step. */
  escalateAt: string | null;
  /** Who the escalation lets answer too; `null` without an escalation step. */
  escalatedTo: EscalationTargets | null;
  /** When `onTimeout` applies; `null` without a timeout. */
  timeoutAt: string | null;
  /** When the timer takes the next step (a reminder, the escalation or the timeout). */
  nextAt: string | null;
}

/** Who answers: a subject and the groups and roles its token carries. */
export interface ApprovalPrincipal {
  subject: string;
  groups?: readonly string[];
  roles?: readonly string[];
}

/**
 * Status of a run. `queued`: accepted for background execution (the HTTP server's multitask
 * queue) and not yet started by any process; the first commit of the run makes it `running`.
 */
export type RunStatus = "queued" | "running" | "done" | "interrupted" | "error" | "cancelled";

/** What a run returns: the typed result of `invoke`, `resume` and `resumeTargeted`. */
export interface RunResult<State = Record<string, unknown>> {
  threadId: ThreadId;
  runId: RunId;
  status: "done" | "interrupted" | "error" | "cancelled";
  values: State;
  /**
   * The oldest pending interrupts of the thread after this call, oldest first: all of them when
   * at most {@link RUN_RESULT_INTERRUPT_LIMIT} are pending, else that many. `pendingCount` says
   * how many there are; page through all of them with `listInterrupts({ threadId, status:
   * "pending", cursor })` (newest first). Empty unless `status` is `interrupted`.
   */
  interrupts: Interrupt[];
  /**
   * How many interrupts of the thread are pending after this call (`interrupts.length` unless
   * more than {@link RUN_RESULT_INTERRUPT_LIMIT} are); 0 unless `status` is `interrupted`.
   */
  pendingCount: number;
  checkpointId: CheckpointId | null;
  /**
   * The recorded failure when `status` is `error`. `details` is kept for a failed model answer
   * (`model_failed`): the provider's error code, the response id, whether a retry may succeed.
   */
  error?: {
    name: string;
    message: string;
    code?: string;
    node?: string;
    details?: Record<string, unknown>;
  };
  /**
   * Answers of this call that the node's schema rejected on re-run (they had passed only the
   * stored JSON Schema, in a process that did not know the real one). Each question was asked
   * again: it is pending as `askedAgainAs`. Absent when there were none.
   */
  rejectedAnswers?: RejectedAnswer[];
}

/**
 * The most pending interrupts a {@link RunResult} carries. A call that leaves a thread with a
 * thousand parallel questions returns the oldest page and the count, so answering them one by one
 * does not decode every pending question on every answer.
 */
export const RUN_RESULT_INTERRUPT_LIMIT = 100;

/**
 * An answer that passed the stored JSON Schema but not the schema the node declares: the
 * interrupt was superseded and the same question asked again as a new pending interrupt.
 */
export interface RejectedAnswer {
  /** The interrupt whose answer was rejected (now `superseded`). */
  interruptId: InterruptId;
  /** The new pending interrupt asking the same question. */
  askedAgainAs: InterruptId;
  /** What an `InvalidAnswerError` would have said. */
  message: string;
  /** The schema's issues, as in `InvalidAnswerError.details.issues`. */
  issues: unknown[];
}

/** A steering instruction: recorded separately from answers, read by node code via `ctx.steering`. */
export interface SteeringRecord {
  id: string;
  threadId: ThreadId;
  runId: RunId;
  taskId?: TaskId;
  interruptId?: InterruptId;
  namespace: string[];
  text: string;
  actor: string;
  checkpointId: CheckpointId | null;
  createdAt: string;
}

/**
 * What an audit entry records. `remind` and `escalate` are steps of an interrupt's escalation
 * ladder, taken by the deadline timer (actor `system:timer`).
 */
export type AuditAction =
  | "answer"
  | "approval"
  | "cancel"
  | "timeout"
  | "remind"
  | "escalate"
  | "steer"
  | "supersede"
  | "update_state";

/** One line of the append-only audit log. */
export interface AuditRecord {
  id: string;
  threadId: ThreadId;
  runId: RunId | null;
  interruptId?: InterruptId;
  action: AuditAction;
  actor: string;
  data: unknown;
  createdAt: string;
}
