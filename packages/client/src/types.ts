/**
 * The shapes the HTTP API sends and takes. Records shared with the runtime come from
 * `@rein/core` as types only, so nothing of the runtime is bundled into a browser.
 */
import type {
  ApprovalEntry,
  Approvers,
  AuditBreak,
  AuditBreakReason,
  AuditChainEntry,
  AuditRecord,
  AuditVerification,
  EscalationTargets,
  Interrupt,
  InterruptApproval,
  InterruptEscalation,
  InterruptListItem,
  RunResult,
  StateSnapshot,
  SteeringRecord,
  StreamEvent,
  StreamMode,
} from "@rein/core";

export type {
  ApprovalEntry,
  Approvers,
  AuditBreak,
  AuditBreakReason,
  AuditRecord,
  AuditVerification,
  EscalationTargets,
  Interrupt,
  InterruptApproval,
  InterruptEscalation,
  InterruptListItem,
  RunResult,
  StateSnapshot,
  SteeringRecord,
  StreamEvent,
  StreamMode,
};

/** Who may approve, as stored with the interrupt (the core type, under the wire contract's name). */
export type ApprovalPolicy = Approvers;

/** Why a policy refused an answer (`details.rule` of a 403 `not_allowed`). */
export type NotAllowedRule = "not_listed" | "requester" | "already_approved" | "no_principal";

/** `details` of a 403 `not_allowed`. */
export interface NotAllowedDetails {
  interruptId: string;
  rule: NotAllowedRule;
  policy: ApprovalPolicy;
}

/** The interrupts a bulk decision applies to: a list of ids, or a filter with its expected count. */
export type DecisionSelection =
  | { ids: string[]; filter?: never; expectedCount?: never }
  | {
      filter: {
        status?: "pending";
        graph?: string;
        subAgentGraph?: string;
        threadId?: string;
      };
      /** How many interrupts the filter must match now; another count refuses (409). */
      expectedCount: number;
      ids?: never;
    };

/** `POST /interrupts/decisions`: one decision applied to every selected interrupt. */
export type DecisionsRequest = DecisionSelection & {
  /** The one answer, applied to each. */
  resume: unknown;
  steering?: string;
};

/** `POST /interrupts/decisions` 200: each interrupt and what the decision did to it. */
export interface DecisionsResult {
  decided: {
    interruptId: string;
    threadId: string;
    /** `answered`: applied; `approval_recorded`: a partial approval, still pending. */
    status: "answered" | "approval_recorded";
  }[];
  count: number;
}

/** One interrupt a refused bulk decision names, and why (`details.refused` of `bulk_refused`). */
export interface BulkRefusal {
  interruptId: string;
  code: "not_allowed" | "stale_target" | "not_found" | "invalid_answer";
  message: string;
}

/** One line of `GET /audit/export`: the stored line, its chain links, its decoded record. */
export interface AuditExportLine extends AuditChainEntry {
  /** `content` decoded; null when it no longer decodes. */
  record: AuditRecord | null;
}

/** The body of every error response. */
export interface ErrorBody {
  error: string;
  message: string;
  details: Record<string, unknown>;
}

/** Status of a thread as the API reports it. */
export type ThreadStatus =
  "idle" | "queued" | "running" | "interrupted" | "done" | "error" | "cancelled";

/** `GET /threads/:id`. */
export interface Thread {
  threadId: string;
  graph: string;
  tenant: string | null;
  metadata: Record<string, unknown>;
  status: ThreadStatus;
  runId: string | null;
  headCheckpointId: string | null;
  pendingInterrupts: Interrupt[];
  createdAt: string;
  updatedAt: string;
}

/** A page of a list. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** A page of the approval queue, with the size of the whole filtered queue. */
export interface InterruptPage extends Page<InterruptListItem> {
  /** How many interrupts match the filters on all pages. */
  total: number;
}

/** A run record. */
export interface Run {
  runId: string;
  threadId: string;
  parentRunId: string | null;
  parentTaskId: string | null;
  graph: string;
  namespace: string[];
  status: "queued" | "running" | "done" | "interrupted" | "error" | "cancelled";
  createdAt: string;
  updatedAt: string;
  error: { name: string; message: string; code?: string; node?: string } | null;
}

/** A run with its child runs. */
export interface RunTree extends Run {
  children: RunTree[];
}

/** 202 of a background run. */
export interface RunAccepted {
  threadId: string;
  runId: string;
  status: "queued" | "running";
}

/** What a resume or steer addresses. */
export interface Target {
  runId: string;
  namespace?: string[];
  taskId?: string;
  interruptId?: string;
}

/** What happens to child interrupts when a parent run is resumed. */
export type PendingChildren = "keep" | "cancel" | { resolve: unknown };

/** An answer: exactly one of `resume` and `resumeMap`. */
export type Answer =
  { resume: unknown; resumeMap?: never } | { resumeMap: Record<string, unknown>; resume?: never };

/** `POST /threads/:id/resume` (and `command` of a run). */
export type ResumeRequest = Answer & {
  target?: Target;
  steering?: string;
  pendingChildren?: PendingChildren;
  expectedCheckpointId?: string;
};

/** `POST /threads/:id/runs`: exactly one of `input` and `command`. */
export type StartRunRequest = (
  | { input: Record<string, unknown> | null; command?: never }
  | { command: ResumeRequest; input?: never }
) & {
  interruptBefore?: string[];
  interruptAfter?: string[];
  onPending?: "error" | "cancel";
  streamMode?: StreamMode | StreamMode[];
  /**
   * What happens while the thread runs another run (with `input`): `reject` (409, the default),
   * `enqueue` (after it), `interrupt` (cancel it at its next step), `rollback` (cancel it and
   * discard its steps).
   */
  multitask?: "reject" | "enqueue" | "interrupt" | "rollback";
};

/** An event of a run stream, named as on the wire. */
export type RunStreamEvent =
  | { id: number | null; event: "run"; data: { threadId: string; runId: string; record?: Run } }
  | { id: number | null; event: "error"; data: ErrorBody }
  | {
      [K in StreamEvent["type"]]: {
        id: number | null;
        event: K;
        data: Extract<StreamEvent, { type: K }>;
      };
    }[StreamEvent["type"]];

/** `GET /healthz`. */
export interface Health {
  ok: true;
  store: string;
  graphs: string[];
  /** `open`: the server needs no token; `token`: every call needs a bearer token. */
  auth: "token" | "open";
}

/** `GET /whoami`: who the token is. */
export interface Whoami {
  /** The actor recorded in the audit log for this token's answers and steering. */
  subject: string;
  /** The only tenant whose threads the token sees; null in open mode. */
  tenant: string | null;
  scopes: ("read" | "run" | "resume" | "admin" | "metrics")[];
  /** Groups of the token, which approval policies may name. */
  groups: string[];
  /** Roles of the token, which approval policies may name. */
  roles: string[];
}

/** An event type of the webhook outbox (see docs/webhooks.md). */
export type WebhookEventType =
  | "interrupt.pending"
  | "interrupt.reminded"
  | "interrupt.answered"
  | "interrupt.expired"
  | "interrupt.escalated"
  | "interrupt.cancelled"
  | "run.finished";

/** A webhook subscription (`GET /webhooks`). */
export interface Webhook {
  id: string;
  /** The tenant whose events it receives; null (made in open mode): every tenant's. */
  tenant: string | null;
  url: string;
  events: WebhookEventType[];
  /** Root graphs it receives events of; empty: every graph. */
  graphs: string[];
  createdAt: string;
  createdBy: string;
  /** Until when the secret before the last rotation still signs too. */
  previousSecretUntil: string | null;
}

/** `POST /webhooks`: the subscription and its signing secret, shown only here. */
export interface CreatedWebhook extends Webhook {
  secret: string;
}

/** One signed decision link of `POST /interrupts/:id/links`. */
export interface DecisionLink {
  /** `approve` (answers `{ type: "accept" }`) or `reject` (`{ type: "ignore" }`). */
  decision: "approve" | "reject";
  /** `{publicUrl}/links/<token>`: `GET` shows a confirmation page, its `POST` applies once. */
  url: string;
  expiresAt: string;
}

/** `POST /webhooks/:id/rotate`: the new secret, shown only here. */
export interface RotatedWebhook {
  id: string;
  secret: string;
  previousSecretUntil: string;
}

/** One delivery of an event to a subscription, with its attempts. */
export interface WebhookDelivery {
  /** The `webhook-id` of every attempt. */
  eventId: string;
  type: WebhookEventType;
  status: "pending" | "delivered" | "dead";
  attempts: number;
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
  log: {
    attempt: number;
    at: string;
    statusCode: number | null;
    error: string | null;
    durationMs: number;
  }[];
}
