/**
 * The zod schemas of every request and response: the server validates with them, checks its
 * handlers' bodies against them and derives the OpenAPI document from them; the client and the
 * console take their types from them. One declaration per wire shape, so none can drift apart.
 */
import type {
  CheckpointId,
  InterruptId,
  RunId,
  RunStatus,
  StreamMode,
  TaskId,
  ThreadId,
} from "@rein/core";
import { z } from "zod";

/**
 * Ids in paths, queries and bodies: printable, URL-safe, at most 256 characters. Rejecting the
 * rest at the edge keeps NUL bytes and control characters out of every store.
 */
export const Id = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[A-Za-z0-9._:@~+=-]+$/, "ids use letters, digits and . _ : @ ~ + = - only");

/**
 * An id of one kind: validated as {@link Id}, then carrying core's brand, so a handler hands it
 * to the store as is. The brand is a type only; the schema's check is what earns it.
 */
function brandedId<B extends ThreadId | RunId | TaskId | InterruptId | CheckpointId>() {
  return Id.transform((id) => id as B);
}

/** A thread id in a path, query or body. */
export const ThreadIdSchema = brandedId<ThreadId>();
/** A run id in a path, query or body. */
export const RunIdSchema = brandedId<RunId>();
/** A task id in a body. */
export const TaskIdSchema = brandedId<TaskId>();
/** An interrupt id in a path, query or body. */
export const InterruptIdSchema = brandedId<InterruptId>();
/** A checkpoint id in a query or body. */
export const CheckpointIdSchema = brandedId<CheckpointId>();

/**
 * The status of a run, spelled once for the wire: a run record's, a result's (its final subset),
 * a 202's (its early subset) and a thread's (these or `idle`).
 */
export const RunStatusSchema = z.enum([
  "queued",
  "running",
  "done",
  "interrupted",
  "error",
  "cancelled",
] as const satisfies readonly RunStatus[]);

// Core's RunStatus and the wire's are the same set: a status added to one fails to compile here.
true satisfies RunStatus extends z.infer<typeof RunStatusSchema> ? true : never;

/** The status of a thread as the API reports it: its run's, or `idle` before the first run. */
export const ThreadStatusSchema = z.enum([
  "idle",
  "queued",
  "running",
  "interrupted",
  "done",
  "error",
  "cancelled",
] as const satisfies readonly ("idle" | z.infer<typeof RunStatusSchema>)[]);

// Every run status is a thread status too: a run status added without it fails to compile here.
true satisfies z.infer<typeof RunStatusSchema> extends z.infer<typeof ThreadStatusSchema>
  ? true
  : never;

/**
 * Free text of a request that a store keeps or filters on as text (names, namespace segments,
 * selectors, steering, cursors): 1 to `max` characters without NUL. PostgreSQL text cannot hold
 * NUL, so it is refused here on every store alike, before anything reaches one. JSON values
 * (input, answers, metadata) are data and keep any character.
 */
export function text(max: number) {
  return z
    .string()
    .min(1)
    .max(max)
    .refine((value) => !value.includes("\u0000"), "must not contain a NUL character (U+0000)");
}

/** Any JSON value. */
export const Json = z.unknown();

/** A JSON object. */
export const JsonObject = z.record(z.string(), z.unknown());

/** Selector lists of per-run static interrupts (`"node"` or `"parent/child/node"`). */
const Selectors = z.array(text(512)).max(100);

/** What a resume or steer addresses (SPEC §3 targeted resume). */
export const TargetSchema = z
  .object({
    runId: RunIdSchema,
    namespace: z.array(text(256)).max(32).default([]),
    taskId: TaskIdSchema.optional(),
    interruptId: InterruptIdSchema.optional(),
  })
  .strict();

/** What happens to child interrupts when a parent run is resumed. */
export const PendingChildrenSchema = z.union([
  z.literal("keep"),
  z.literal("cancel"),
  z.object({ resolve: Json }).strict(),
]);

/** Fields shared by a resume request and a run started with a command. */
export const ResumeFields = z
  .object({
    target: TargetSchema.optional(),
    resume: Json.optional(),
    resumeMap: z.record(Id, Json).optional(),
    steering: text(10_000).optional(),
    pendingChildren: PendingChildrenSchema.optional(),
    expectedCheckpointId: Id.optional(),
  })
  .strict();

/** `POST /threads/:id/resume`. Exactly one of `resume` and `resumeMap`. */
export const ResumeBody = ResumeFields;

/** `POST /threads`. */
export const CreateThreadBody = z
  .object({
    graph: text(256),
    threadId: ThreadIdSchema.optional(),
    metadata: JsonObject.optional(),
  })
  .strict();

/**
 * The stream modes of core a client may ask for over HTTP (all but `messages`); a server's run hub
 * keeps all of these.
 */
export const StreamModeSchema = z.enum([
  "values",
  "updates",
  "custom",
  "tasks",
  "checkpoints",
  "debug",
] as const satisfies readonly StreamMode[]);

/** `POST /threads/:id/runs` and `POST /threads/:id/runs/stream`. Exactly one of input and command. */
export const StartRunBody = z
  .object({
    input: z.union([JsonObject, z.null()]).optional(),
    command: ResumeFields.optional(),
    wait: z.boolean().optional(),
    interruptBefore: Selectors.optional(),
    interruptAfter: Selectors.optional(),
    onPending: z.enum(["error", "cancel"]).optional(),
    streamMode: z.union([StreamModeSchema, z.array(StreamModeSchema).max(6)]).optional(),
    /** What happens while the thread runs another run (input only): see docs/server.md. */
    multitask: z.enum(["reject", "enqueue", "interrupt", "rollback"]).optional(),
  })
  .strict();

/** `POST /threads/:id/runs`, as validated. */
export type StartRun = z.infer<typeof StartRunBody>;

/** `POST /threads/:id/steer`. */
export const SteerBody = z
  .object({
    target: TargetSchema.optional(),
    text: text(10_000),
  })
  .strict();

/** Path parameters. */
export const ThreadParams = z.object({ id: ThreadIdSchema }).strict();
/** Path parameters of a run of a thread. */
export const RunParams = z.object({ id: ThreadIdSchema, runId: RunIdSchema }).strict();

const Limit = z.coerce.number().int().min(1).max(500);
const Cursor = text(1024);

/** `GET /threads/:id/history`. */
export const HistoryQuery = z.object({ limit: Limit.optional(), before: Id.optional() }).strict();

/** `GET /threads/:id/state`. */
export const StateQuery = z
  .object({ subgraphs: z.enum(["true", "false"]).optional(), checkpointId: Id.optional() })
  .strict();

/** `GET /threads`. */
export const ThreadListQuery = z
  .object({ cursor: Cursor.optional(), limit: Limit.optional() })
  .strict();

/** `GET /interrupts`. */
export const InterruptQuerySchema = z
  .object({
    status: z.enum(["pending", "answered", "cancelled", "superseded"]).optional(),
    graph: text(256)
      .optional()
      .describe(
        "The app: the root graph of the run tree. Lists every question of its tree, the sub-agents' included.",
      ),
    subAgentGraph: text(256)
      .optional()
      .describe(
        "The graph of the run that asked (a sub-agent's own graph; the root graph for the root run's own questions).",
      ),
    threadId: ThreadIdSchema.optional(),
    cursor: Cursor.optional(),
    limit: Limit.optional(),
  })
  .strict();

/** `GET /interrupts/stream`. */
export const InterruptStreamQuery = InterruptQuerySchema.omit({ cursor: true, status: true });

/** `GET /audit`. */
export const AuditQuerySchema = z
  .object({
    threadId: ThreadIdSchema.optional(),
    cursor: Cursor.optional(),
    limit: Limit.optional(),
  })
  .strict();

/** `GET /audit/verify` and `GET /audit/export`: one thread, or a tenant (an all-tenant token). */
export const AuditScopeQuerySchema = z
  .object({ threadId: ThreadIdSchema.optional(), tenant: text(256).optional() })
  .strict();

/** `GET .../stream` (join). */
export const JoinQuery = z
  .object({
    streamMode: z.union([StreamModeSchema, z.array(StreamModeSchema).max(6)]).optional(),
  })
  .strict();

// Responses ----------------------------------------------------------------------------------

/** The error body of every 4xx/5xx. */
export const ErrorResponse = z.object({
  error: z.string(),
  message: z.string(),
  details: JsonObject,
});

const PathEntry = z.object({
  runId: z.string(),
  graph: z.string(),
  node: z.string(),
  taskId: z.string(),
});

/** One recorded approval of an interrupt under an approval policy. */
const ApprovalEntrySchema = z.object({ actor: z.string(), digest: z.string(), at: z.string() });

/**
 * Who may answer an interrupt and the approvals so far: present only when a policy applies
 * (docs/governance.md).
 */
export const ApprovalSchema = z.object({
  required: z.number().int().positive(),
  approvals: z.array(ApprovalEntrySchema),
  policy: z.object({
    subjects: z.array(z.string()).optional(),
    groups: z.array(z.string()).optional(),
    roles: z.array(z.string()).optional(),
    count: z.number().int().positive(),
    notRequester: z.boolean(),
  }),
});

/** Principals an escalation lets answer too. */
const EscalationTargetsSchema = z.object({
  subjects: z.array(z.string()).optional(),
  groups: z.array(z.string()).optional(),
  roles: z.array(z.string()).optional(),
});

/**
 * The escalation ladder of an interrupt and the step it reached: present only when the question
 * was asked with `remind` or `escalate` (docs/interrupts.md).
 */
export const EscalationSchema = z.object({
  stage: z.enum(["none", "reminded", "escalated"]),
  remindAt: z.array(z.string()),
  escalateAt: z.string().nullable(),
  escalatedTo: EscalationTargetsSchema.nullable(),
  timeoutAt: z.string().nullable(),
  nextAt: z.string().nullable(),
});

/** An interrupt record (SPEC §2). */
export const InterruptSchema = z.looseObject({
  id: z.string(),
  runId: z.string(),
  threadId: z.string(),
  node: z.string(),
  taskId: z.string(),
  namespace: z.array(z.string()),
  order: z.number(),
  payload: Json,
  kind: z.enum(["dynamic", "before", "after"]),
  status: z.enum(["pending", "answered", "cancelled", "superseded"]),
  checkpointId: z.string(),
  createdAt: z.string(),
  approval: ApprovalSchema.optional(),
  escalation: EscalationSchema.optional(),
});

/** An item of the approval queue. */
export const InterruptItemSchema = InterruptSchema.extend({
  path: z.array(PathEntry),
  graph: z.string(),
  subAgentId: z.string().nullable(),
  ageMs: z.number(),
  deadline: z.string().nullable(),
  answerSchema: Json,
});

/** A page of the approval queue. */
export const InterruptPageSchema = z.object({
  items: z.array(InterruptItemSchema),
  nextCursor: z.string().nullable(),
  /** How many interrupts match the filters on all pages, counted from the queue's index. */
  total: z.number().int().nonnegative(),
});

/** A thread with its status and pending interrupts. */
export const ThreadSchema = z.object({
  threadId: z.string(),
  graph: z.string(),
  tenant: z.string().nullable(),
  metadata: JsonObject,
  status: ThreadStatusSchema,
  runId: z.string().nullable(),
  headCheckpointId: z.string().nullable(),
  pendingInterrupts: z.array(InterruptSchema),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** A page of threads. */
export const ThreadPageSchema = z.object({
  items: z.array(ThreadSchema),
  nextCursor: z.string().nullable(),
});

/** What a run returns. */
export const RunResultSchema = z.looseObject({
  threadId: z.string(),
  runId: z.string(),
  status: RunStatusSchema.extract(["done", "interrupted", "error", "cancelled"]),
  values: JsonObject,
  /** The oldest pending interrupts (at most 100); `pendingCount` says how many are pending. */
  interrupts: z.array(InterruptSchema),
  /** Absent from results stored by versions before it existed. */
  pendingCount: z.number().int().optional(),
  checkpointId: z.string().nullable(),
});

/** 202 of a background run: `queued` until a process has started it. */
export const RunAcceptedSchema = z.object({
  threadId: z.string(),
  runId: z.string(),
  status: RunStatusSchema.extract(["queued", "running"]),
});

/** A run record with its child runs (the run tree). */
export interface RunTreeNode {
  runId: string;
  threadId: string;
  parentRunId: string | null;
  parentTaskId: string | null;
  graph: string;
  namespace: string[];
  status: z.infer<typeof RunStatusSchema>;
  createdAt: string;
  updatedAt: string;
  error?: z.infer<typeof RunErrorSchema> | null | undefined;
  children: RunTreeNode[];
}

/** Why a run failed, as its record keeps it. */
const RunErrorSchema = z.looseObject({
  name: z.string(),
  message: z.string(),
  code: z.string().optional(),
  node: z.string().optional(),
});

const RunBase = z.looseObject({
  runId: z.string(),
  threadId: z.string(),
  parentRunId: z.string().nullable(),
  parentTaskId: z.string().nullable(),
  graph: z.string(),
  namespace: z.array(z.string()),
  status: RunStatusSchema,
  createdAt: z.string(),
  updatedAt: z.string(),
  /** Why the run failed; absent or null unless it did. */
  error: RunErrorSchema.nullable().optional(),
});

/** A run tree node. */
export const RunTreeSchema: z.ZodType<RunTreeNode> = RunBase.extend({
  get children() {
    return z.array(RunTreeSchema);
  },
});

/** A run record. */
export const RunSchema = RunBase;

/** A list of runs of a thread. */
export const RunListSchema = z.object({ items: z.array(RunBase) });

/** A state snapshot (SPEC §5); its inner shapes follow core's `StateSnapshot`. */
export const StateSchema = z.looseObject({
  values: JsonObject,
  next: z.array(z.string()),
  tasks: z.array(Json),
  /** The oldest pending interrupts (at most 100); `pendingCount` says how many are pending. */
  interrupts: z.array(InterruptSchema),
  /** Absent from results stored by versions before it existed. */
  pendingCount: z.number().int().optional(),
  checkpointId: z.string().nullable(),
});

/** History: snapshots newest first. */
export const HistorySchema = z.object({ items: z.array(StateSchema) });

/** A steering record. */
export const SteeringSchema = z.looseObject({
  id: z.string(),
  threadId: z.string(),
  runId: z.string(),
  namespace: z.array(z.string()),
  text: z.string(),
  actor: z.string(),
  createdAt: z.string(),
});

/** Why an audit chain does not verify (see docs/audit.md). */
export const AuditBreakReasonSchema = z.enum([
  "hash_mismatch",
  "broken_link",
  "missing",
  "out_of_order",
  "unchained",
  "truncated",
  "seal_mismatch",
  "bad_signature",
]);

/** `GET /audit/verify`: the chains re-computed, and the first broken link. */
export const AuditVerificationSchema = z.object({
  ok: z.boolean(),
  checked: z.number().int(),
  chains: z.number().int(),
  legacy: z.number().int(),
  firstBroken: z
    .object({
      threadId: z.string(),
      n: z.number().int().nullable(),
      seq: z.number().int().nullable(),
      id: z.string().nullable(),
      reason: AuditBreakReasonSchema,
      message: z.string(),
    })
    .optional(),
  signed: z.object({ checked: z.number().int(), written: z.number().int() }).nullable(),
});

/** One line of `GET /audit/export` (JSON Lines): the stored line, its links, its record. */
export const AuditExportLineSchema = z.object({
  seq: z.number().int(),
  threadId: z.string(),
  n: z.number().int().nullable(),
  prevHash: z.string().nullable(),
  hash: z.string().nullable(),
  /** The stored text the hash covers. */
  content: z.string(),
  /** `content` decoded; null when it no longer decodes. */
  record: Json,
});

/** A page of the audit log. */
export const AuditPageSchema = z.object({
  items: z.array(
    z.looseObject({
      id: z.string(),
      threadId: z.string(),
      runId: z.string().nullable(),
      action: z.string(),
      actor: z.string(),
      data: Json,
      createdAt: z.string(),
    }),
  ),
  nextCursor: z.string().nullable(),
});

/** `GET /healthz`. */
export const HealthSchema = z.object({
  ok: z.literal(true),
  store: z.string(),
  graphs: z.array(z.string()),
  /** `open`: no token needed (the console skips its sign-in screen); `token`: a bearer token. */
  auth: z.enum(["token", "open"]),
});

/** One check of `GET /readyz`: `ok`, or why not. */
export const ReadinessCheckSchema = z.object({
  name: z.enum(["store", "migrations", "listener", "shutdown"]),
  ok: z.boolean(),
  detail: z.string(),
});

/** `GET /readyz`: 200 when every check holds, 503 with the first failing check's reason. */
export const ReadinessSchema = z.object({
  ready: z.boolean(),
  /** The first failing check's detail, or null when ready. */
  reason: z.string().nullable(),
  checks: z.array(ReadinessCheckSchema),
});

/** `GET /whoami`. */
export const WhoamiSchema = z.object({
  subject: z.string(),
  tenant: z.string().nullable(),
  scopes: z.array(z.enum(["read", "run", "resume", "admin", "metrics"])),
  /** Groups of the token (approval policies may name them). */
  groups: z.array(z.string()),
  /** Roles of the token (approval policies may name them). */
  roles: z.array(z.string()),
  /** The OpenID issuer of the caller's token; absent for tokens-file tokens and API keys. */
  issuer: z.string().optional(),
});

/**
 * `GET /auth/config` (no token needed): how a browser signs in. `oidc` names the issuer, the
 * console's public client id, the audience to ask tokens for and the scopes to request; null when
 * the server trusts no issuer for the console (sign in with a token then).
 */
export const AuthSettingsSchema = z.object({
  oidc: z
    .object({
      issuer: z.string(),
      clientId: z.string(),
      audience: z.string(),
      scopes: z.array(z.string()),
    })
    .nullable(),
});

/** `POST /interrupts/decisions`: one decision for a list of interrupts, or a filter's. */
export const BulkDecisionBody = z
  .object({
    ids: z.array(Id).min(1).max(10_000).optional(),
    filter: z
      .object({
        status: z.literal("pending").optional(),
        graph: text(256).optional(),
        subAgentGraph: text(256).optional(),
        threadId: Id.optional(),
      })
      .strict()
      .optional()
      .describe("The pending interrupts to decide, as `GET /interrupts` filters them."),
    expectedCount: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe("With `filter`: how many the caller saw; another count refuses the decision."),
    resume: Json.describe("The one answer given to each interrupt."),
    steering: z.string().min(1).max(10_000).optional(),
  })
  .strict()
  .refine((body) => (body.ids === undefined) !== (body.filter === undefined), {
    message: "Send `ids` or `filter`, not both and not neither.",
  })
  .refine((body) => body.filter === undefined || body.expectedCount !== undefined, {
    message: "A `filter` needs `expectedCount`: the number of interrupts the decision is for.",
  });

/** What a bulk decision did. */
export const BulkDecidedSchema = z.object({
  decided: z.array(
    z.object({
      interruptId: z.string(),
      threadId: z.string(),
      status: z.enum(["answered", "approval_recorded"]),
    }),
  ),
  count: z.number().int().nonnegative(),
});

/** One signed decision link of `POST /interrupts/:id/links`. */
export const DecisionLinkSchema = z.object({
  /** `approve` (answers `{ type: "accept" }`) or `reject` (`{ type: "ignore" }`). */
  decision: z.enum(["approve", "reject"]),
  /** `{publicUrl}/links/<token>`: `GET` shows a confirmation page, its `POST` applies once. */
  url: z.string(),
  expiresAt: z.string(),
});

/** `POST /interrupts/:id/links`. */
export const DecisionLinksSchema = z.object({ links: z.array(DecisionLinkSchema) });
