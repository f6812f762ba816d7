/**
 * The TypeScript types of the wire, inferred from the schemas (`z.output` for what the server
 * sends, `z.input` for what it takes), so a field changed in a schema changes the client's and
 * the console's types with it. Records core declares (interrupts, queue items, audit records)
 * keep core's types where a wire shape holds them: the schema describes them, and the server's
 * route definitions check that what it sends fits the schema.
 */
import type { AuditRecord, Interrupt, InterruptListItem } from "@rein/core";
import type { z } from "zod";
import type * as S from "./schemas.ts";
import type * as W from "./webhooks.ts";
import type * as K from "./api-keys.ts";

/** `T` with the fields of `Records` replaced by core's record types. */
type WithRecords<T, Records> = Omit<T, keyof Records> & Records;

/** The body of every error response. */
export type ErrorBody = z.output<typeof S.ErrorResponse>;

/** Status of a thread as the API reports it. */
export type ThreadStatus = z.output<typeof S.ThreadStatusSchema>;

/** `GET /threads/:id`. */
export type Thread = WithRecords<
  z.output<typeof S.ThreadSchema>,
  { pendingInterrupts: Interrupt[] }
>;

/** A page of a list. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** A page of the approval queue, with the size of the whole filtered queue. */
export type InterruptPage = WithRecords<
  z.output<typeof S.InterruptPageSchema>,
  { items: InterruptListItem[] }
>;

/** A run record. */
export type Run = z.output<typeof S.RunSchema>;

/** A run with its child runs. */
export type RunTree = S.RunTreeNode;

/** 202 of a background run. */
export type RunAccepted = z.output<typeof S.RunAcceptedSchema>;

/** What a resume or steer addresses. */
export type Target = z.input<typeof S.TargetSchema>;

/** What happens to child interrupts when a parent run is resumed. */
export type PendingChildren = z.input<typeof S.PendingChildrenSchema>;

/**
 * An answer: exactly one of `resume` and `resumeMap` (the server checks the rule in code, the
 * schema takes both as optional).
 */
export type Answer =
  { resume: unknown; resumeMap?: never } | { resumeMap: Record<string, unknown>; resume?: never };

/** `POST /threads/:id/resume` (and `command` of a run). */
export type ResumeRequest = Answer & Omit<z.input<typeof S.ResumeFields>, "resume" | "resumeMap">;

/** `POST /threads/:id/runs`: exactly one of `input` and `command`. */
export type StartRunRequest = (
  | { input: Record<string, unknown> | null; command?: never }
  | { command: ResumeRequest; input?: never }
) &
  Omit<z.input<typeof S.StartRunBody>, "input" | "command" | "wait">;

/** The interrupts a bulk decision applies to: a list of ids, or a filter with its expected count. */
export type DecisionSelection =
  | { ids: string[]; filter?: never; expectedCount?: never }
  | {
      filter: NonNullable<z.input<typeof S.BulkDecisionBody>["filter"]>;
      /** How many interrupts the filter must match now; another count refuses (409). */
      expectedCount: number;
      ids?: never;
    };

/** `POST /interrupts/decisions`: one decision applied to every selected interrupt. */
export type DecisionsRequest = DecisionSelection &
  Pick<z.input<typeof S.BulkDecisionBody>, "resume" | "steering">;

/** `POST /interrupts/decisions` 200: each interrupt and what the decision did to it. */
export type DecisionsResult = z.output<typeof S.BulkDecidedSchema>;

/** One line of `GET /audit/export`: the stored line, its chain links, its decoded record. */
export type AuditExportLine = WithRecords<
  z.output<typeof S.AuditExportLineSchema>,
  { record: AuditRecord | null }
>;

/** `GET /healthz`. */
export type Health = z.output<typeof S.HealthSchema>;

/** `GET /readyz`: whether this server should take traffic, and why not. */
export type Readiness = z.output<typeof S.ReadinessSchema>;

/** `GET /whoami`: who the token is. */
export type Whoami = z.output<typeof S.WhoamiSchema>;

/** `GET /auth/config`: how a browser signs in (the OpenID issuer and client, or null). */
export type AuthSettings = z.output<typeof S.AuthSettingsSchema>;

/** One signed decision link of `POST /interrupts/:id/links`. */
export type DecisionLink = z.output<typeof S.DecisionLinkSchema>;

/** An event type of the webhook outbox (see docs/webhooks.md). */
export type WebhookEventType = z.output<typeof W.WebhookEventTypeSchema>;

/** A webhook subscription (`GET /webhooks`). */
export type Webhook = z.output<typeof W.WebhookSchema>;

/** `POST /webhooks`: the subscription and its signing secret, shown only here. */
export type CreatedWebhook = z.output<typeof W.CreatedWebhookSchema>;

/** `POST /webhooks/:id/rotate`: the new secret, shown only here. */
export type RotatedWebhook = z.output<typeof W.RotatedWebhookSchema>;

/** One delivery of an event to a subscription, with its attempts. */
export type WebhookDelivery = z.output<typeof W.WebhookDeliverySchema>;

/** An API key as listed (`GET /api-keys`): never its secret. */
export type ApiKey = z.output<typeof K.ApiKeySchema>;

/** `POST /api-keys`: the key with its secret value, shown only here. */
export type CreatedApiKey = z.output<typeof K.CreatedApiKeySchema>;
