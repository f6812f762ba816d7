/**
 * The shapes the HTTP API sends and takes. The wire's own shapes are inferred from the server's
 * schemas in `@rein/wire`; records shared with the runtime come from `@rein/core`. Both are
 * imported as types only, so nothing of zod or the runtime is bundled into a browser.
 */
import type { Approvers, NotAllowedRuleName, StreamEvent } from "@rein/core";
import type { ErrorBody, Run } from "@rein/wire";

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
} from "@rein/core";

export type {
  Answer,
  AuditExportLine,
  AuthSettings,
  ApiKey,
  CreatedApiKey,
  CreatedWebhook,
  DecisionLink,
  DecisionSelection,
  DecisionsRequest,
  DecisionsResult,
  ErrorBody,
  Health,
  Readiness,
  InterruptPage,
  Page,
  PendingChildren,
  ResumeRequest,
  RotatedWebhook,
  Run,
  RunAccepted,
  RunTree,
  StartRunRequest,
  Target,
  Thread,
  ThreadStatus,
  Webhook,
  WebhookDelivery,
  WebhookEventType,
  Whoami,
} from "@rein/wire";

/** Who may approve, as stored with the interrupt (the core type, under the wire contract's name). */
export type ApprovalPolicy = Approvers;

/** Why a policy refused an answer (`details.rule` of a 403 `not_allowed`): core's rule names. */
export type NotAllowedRule = NotAllowedRuleName;

/** `details` of a 403 `not_allowed`. */
export interface NotAllowedDetails {
  interruptId: string;
  rule: NotAllowedRule;
  policy: ApprovalPolicy;
}

/** One interrupt a refused bulk decision names, and why (`details.refused` of `bulk_refused`). */
export interface BulkRefusal {
  interruptId: string;
  code: "not_allowed" | "stale_target" | "not_found" | "invalid_answer";
  message: string;
}

/**
 * A run stream event's id, to pass back as `lastEventId`: `<attempt>:<n>` (the attempt of the run
 * that sent it, and its place there), or a number (the `run` event's 0; servers before attempt ids).
 */
export type RunEventId = string | number;

/** An event of a run stream, named as on the wire. */
export type RunStreamEvent =
  | { id: RunEventId | null; event: "run"; data: { threadId: string; runId: string; record?: Run } }
  | { id: RunEventId | null; event: "error"; data: ErrorBody }
  | {
      [K in StreamEvent["type"]]: {
        id: RunEventId | null;
        event: K;
        data: Extract<StreamEvent, { type: K }>;
      };
    }[StreamEvent["type"]];
