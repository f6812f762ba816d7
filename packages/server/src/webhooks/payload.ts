/**
 * The body of a webhook: `{ type, timestamp, data }` (the Standard Webhooks convention), built
 * from the outbox row alone so every attempt sends the same bytes.
 */
import type {
  EscalationTargets,
  InterruptId,
  RunId,
  RunRecord,
  Serializer,
  ThreadId,
} from "@rein/core";
import type {
  OutboxEvent,
  StoredApprovalPolicy,
  StoredInterrupt,
  WebhookEventType,
} from "@rein/core/store";
import { interruptIdOf, runIdOf, threadIdOf } from "../ids.ts";

/** Largest question payload a webhook carries whole (JSON bytes); a larger one is left out. */
export const MAX_PAYLOAD_BYTES = 16 * 1024;

/** One step of the run-tree path of an interrupt, root first. */
export interface WebhookPathEntry {
  graph: string;
  node: string;
}

/** Who may answer a question, as its approval policy was resolved when it was asked. */
export interface WebhookApprovers {
  subjects?: string[];
  groups?: string[];
  roles?: string[];
  /** Distinct approvals that apply the answer. */
  count: number;
  /** The run's requester may not answer. */
  notRequester: boolean;
}

/** `data` of an `interrupt.*` event. */
export interface InterruptEventData {
  threadId: ThreadId;
  runId: RunId;
  interruptId: InterruptId;
  /** The graph that asked (a sub-agent's, in a run tree). */
  graph: string;
  /** The root graph of the run tree: the app. */
  rootGraph: string;
  tenant: string | null;
  /** The interrupt's status after the change. */
  status: string;
  node: string;
  /** The question (`interrupt(payload)`), when its JSON is at most 16 KiB; else `null`. */
  payload: unknown;
  /** Whether `payload` was left out for its size (read it with `GET /interrupts?threadId=…`). */
  payloadOmitted: boolean;
  /** Run-tree path of the asking task, root first. */
  path: WebhookPathEntry[];
  /** Who answered (`interrupt.answered`, and `system:timer` for `interrupt.expired`). */
  actor: string | null;
  /** The answer (`interrupt.answered`, or the `onTimeout` value of `interrupt.expired`). */
  decision: unknown;
  /**
   * `interrupt.escalated` only: who the escalation lets answer from now on, besides those the
   * approval policy lists (the `escalate.approvers` of the question's ladder).
   */
  escalatedTo?: EscalationTargets;
  /** Who may answer (the stored approval policy); `null`: anyone who may resume. */
  approvers: WebhookApprovers | null;
}

/** `data` of a `run.finished` event. */
export interface RunEventData {
  threadId: ThreadId;
  runId: RunId;
  graph: string | null;
  rootGraph: string | null;
  tenant: string | null;
  /** `done`, `error` or `cancelled`. */
  status: string;
  error: RunRecord["error"] | null;
}

/** A webhook's JSON body. */
export interface WebhookBody {
  type: WebhookEventType;
  /** When the change committed (ISO). */
  timestamp: string;
  data: InterruptEventData | RunEventData;
}

/**
 * An interrupt record as a store encodes it: the SQL stores keep the row's columns (ids, graph,
 * status) out of the encoded body, and the path above the asking task as `up`.
 */
type EncodedInterrupt = Partial<StoredInterrupt> & { up?: StoredInterrupt["path"] };

/** The public part of a stored policy (never its requester or digest). */
function approversOf(policy: StoredApprovalPolicy | null | undefined): WebhookApprovers | null {
  if (!policy) return null;
  return {
    ...(policy.subjects ? { subjects: [...policy.subjects] } : {}),
    ...(policy.groups ? { groups: [...policy.groups] } : {}),
    ...(policy.roles ? { roles: [...policy.roles] } : {}),
    count: policy.count,
    notRequester: policy.notRequester,
  };
}

function interruptData(
  event: OutboxEvent,
  serializer: Serializer,
  policy: StoredApprovalPolicy | null | undefined,
): InterruptEventData {
  const record = serializer.deserialize(event.record) as EncodedInterrupt;
  const json = JSON.stringify(record.payload ?? null);
  const fits = Buffer.byteLength(json) <= MAX_PAYLOAD_BYTES;
  const graph = event.graph ?? record.graph ?? "";
  const node = record.node ?? "";
  const path = record.path ?? [...(record.up ?? []), { graph, node }];
  return {
    threadId: threadIdOf(event.threadId),
    runId: runIdOf(event.runId),
    interruptId: interruptIdOf(event.interruptId ?? record.id ?? ""),
    graph,
    rootGraph: event.rootGraph ?? graph,
    tenant: event.tenant,
    status: event.status,
    node,
    payload: fits ? (record.payload ?? null) : null,
    payloadOmitted: !fits,
    path: path.map((entry) => ({ graph: entry.graph, node: entry.node })),
    actor: event.actor,
    decision: event.answer === null ? null : serializer.deserialize(event.answer),
    ...(event.type === "interrupt.escalated"
      ? { escalatedTo: record.ladder?.escalateTo ?? {} }
      : {}),
    // The SQL stores keep the policy in a column of its own, out of the outbox's record.
    approvers: approversOf(record.policy ?? policy),
  };
}

function runData(event: OutboxEvent, serializer: Serializer): RunEventData {
  const record = serializer.deserialize(event.record) as Partial<RunRecord>;
  return {
    threadId: threadIdOf(event.threadId),
    runId: runIdOf(event.runId),
    graph: event.graph ?? record.graph ?? null,
    rootGraph: event.rootGraph ?? record.graph ?? null,
    tenant: event.tenant,
    status: event.status,
    error: record.error ?? null,
  };
}

/**
 * `event`'s webhook body. `policy` is the interrupt's stored approval policy, for a store whose
 * outbox record leaves it out (it never changes once the question is asked, so every attempt
 * still sends the same bytes).
 */
export function webhookBodyOf(
  event: OutboxEvent,
  serializer: Serializer,
  policy?: StoredApprovalPolicy | null,
): WebhookBody {
  return {
    type: event.type,
    timestamp: event.createdAt,
    data:
      event.type === "run.finished"
        ? runData(event, serializer)
        : interruptData(event, serializer, policy),
  };
}

/** The JSON text of `event`'s webhook body (see {@link webhookBodyOf}). */
export function webhookBody(
  event: OutboxEvent,
  serializer: Serializer,
  policy?: StoredApprovalPolicy | null,
): string {
  return JSON.stringify(webhookBodyOf(event, serializer, policy));
}
