/**
 * Rein's error vocabulary. Every error a caller is expected to handle is a {@link ReinError} with a
 * stable `code` from {@link ErrorCodes}; the HTTP layer maps codes to statuses in one table.
 */

/** Stable error codes. The type {@link ErrorCode} is derived from this map. */
export const ErrorCodes = {
  INVALID_GRAPH: "invalid_graph",
  INVALID_UPDATE: "invalid_update",
  INVALID_INPUT: "invalid_input",
  INVALID_ANSWER: "invalid_answer",
  MISSING_CHECKPOINTER: "missing_checkpointer",
  MISSING_THREAD_ID: "missing_thread_id",
  NON_SERIALIZABLE: "non_serializable",
  AMBIGUOUS_RESUME: "ambiguous_resume",
  STALE_TARGET: "stale_target",
  NO_MATCHING_TARGET: "no_matching_target",
  THREAD_INTERRUPTED: "thread_interrupted",
  CHECKPOINT_CONFLICT: "checkpoint_conflict",
  THREAD_BUSY: "thread_busy",
  NOT_FOUND: "not_found",
  SCHEMA_VERSION: "schema_version",
  NODE_FAILED: "node_failed",
  CANCELLED: "cancelled",
  RECURSION_LIMIT: "recursion_limit",
  INVALID_ID: "invalid_id",
  FENCED_OUT: "fenced_out",
  RUN_IN_PROGRESS: "run_in_progress",
  STORE_UNAVAILABLE: "store_unavailable",
  UNAUTHORIZED: "unauthorized",
  FORBIDDEN: "forbidden",
  PAYLOAD_TOO_LARGE: "payload_too_large",
  IDEMPOTENCY_KEY_REUSED: "idempotency_key_reused",
  HEADERS_TOO_LARGE: "headers_too_large",
  REQUEST_TIMEOUT: "request_timeout",
  MODEL_FAILED: "model_failed",
  NOT_ALLOWED: "not_allowed",
  BULK_REFUSED: "bulk_refused",
  COUNT_MISMATCH: "count_mismatch",
  INVALID_LADDER: "invalid_ladder",
  LINKS_NOT_CONFIGURED: "links_not_configured",
  MISSING_CAPABILITY: "missing_capability",
  HANDED_OVER: "handed_over",
  TOKEN_INVALID: "token_invalid",
  TOKEN_EXPIRED: "token_expired",
  TOKEN_NOT_YET_VALID: "token_not_yet_valid",
  TOKEN_AUDIENCE: "token_audience",
  TOKEN_ISSUER: "token_issuer",
  TOKEN_ALGORITHM: "token_algorithm",
  TOKEN_SIGNATURE: "token_signature",
  TOKEN_UNKNOWN_KEY: "token_unknown_key",
  TOKEN_CLAIMS: "token_claims",
  KEY_REVOKED: "key_revoked",
  KEY_EXPIRED: "key_expired",
  IDENTITY_UNAVAILABLE: "identity_unavailable",
  EVENTS_MISSING: "events_missing",
} as const;

/** One of the stable codes in {@link ErrorCodes}. */
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

const REIN_ERROR = Symbol.for("rein.error");

/**
 * Base class of every error Rein raises on purpose.
 *
 * `instanceof` is symbol-based so that it still holds when two copies of `@rein/core` are loaded.
 */
export class ReinError extends Error {
  /** Stable, machine-readable code. */
  readonly code: ErrorCode;
  /** Data the caller needs to act on the error (JSON-serializable). */
  readonly details: Record<string, unknown>;
  readonly [REIN_ERROR] = true;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
  }

  /** True for any Rein error, from any copy of the package. */
  static is(value: unknown): value is ReinError {
    return typeof value === "object" && value !== null && REIN_ERROR in value;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    if (!ReinError.is(value)) return false;
    // Subclasses match by name so two package copies agree on `x instanceof StaleTargetError`.
    if (this === ReinError) return true;
    let proto: unknown = Object.getPrototypeOf(value);
    while (proto && proto !== Object.prototype) {
      if ((proto as { constructor?: { name?: string } }).constructor?.name === this.name)
        return true;
      proto = Object.getPrototypeOf(proto);
    }
    return false;
  }

  /** The JSON shape used at the HTTP edge and in persisted run errors. */
  toJSON(): { error: ErrorCode; message: string; details: Record<string, unknown> } {
    return { error: this.code, message: this.message, details: this.details };
  }
}

/** A graph definition is wrong (unknown node, unreachable node, duplicate name...). */
export class InvalidGraphError extends ReinError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(ErrorCodes.INVALID_GRAPH, message, details);
  }
}

/** A node returned an update the state cannot take (unknown channel, two writes to a last-value channel). */
export class InvalidUpdateError extends ReinError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(ErrorCodes.INVALID_UPDATE, message, details);
  }
}

/** A call's arguments are wrong in a way that is not covered by a more specific error. */
export class InvalidInputError extends ReinError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(ErrorCodes.INVALID_INPUT, message, details);
  }
}

/**
 * An interrupt's escalation ladder is malformed: a step's time is not after the previous step's
 * (`remind` < `escalate.after` < `timeout`), or an escalation names nobody. `details.rule` says
 * which rule it broke. Nothing was stored.
 */
export class InvalidLadderError extends ReinError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(ErrorCodes.INVALID_LADDER, message, details);
  }
}

/**
 * An id (a thread id) is malformed: not a string, empty, too long, with a NUL character or an
 * unpaired surrogate. Refused the same way by every store, before anything is written; `details`
 * says which rule it broke.
 */
export class InvalidIdError extends ReinError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(ErrorCodes.INVALID_ID, message, details);
  }
}

/** A resume answer does not match the schema the interrupt declared. Nothing was stored. */
export class InvalidAnswerError extends ReinError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(ErrorCodes.INVALID_ANSWER, message, details);
  }
}

/** `interrupt()` (or a resume) needs a checkpointer and the graph was compiled without one. */
export class MissingCheckpointerError extends ReinError {
  constructor(
    message = "This graph was compiled without a checkpointer; pass `compile({ checkpointer })` to use interrupts, resume or state.",
  ) {
    super(ErrorCodes.MISSING_CHECKPOINTER, message);
  }
}

/**
 * A feature needs a store capability the store does not declare (see `StoreCapabilities`);
 * `details.capability` names it, `details.feature` what needed it.
 */
export class MissingCapabilityError extends ReinError {
  constructor(capability: string, feature: string) {
    super(
      ErrorCodes.MISSING_CAPABILITY,
      `Cannot use ${feature}: the store does not declare the "${capability}" capability; use a store that does (memory, SQLite, Postgres) or turn the feature off.`,
      { capability, feature },
    );
  }
}

/** A durable call was made without a thread id. */
export class MissingThreadIdError extends ReinError {
  constructor(
    message = 'This call needs a thread id: pass `{ threadId: "..." }` (or `RunConfig.thread(id)`).',
  ) {
    super(ErrorCodes.MISSING_THREAD_ID, message);
  }
}

/** A value that must be stored cannot be serialized; `details.path` names where it is. */
export class NonSerializableError extends ReinError {
  constructor(path: string, what: string) {
    super(
      ErrorCodes.NON_SERIALIZABLE,
      `Value at ${path} is not serializable (${what}); pass plain JSON data, Date, Map, Set, BigInt or Uint8Array.`,
      { path, what },
    );
  }
}

/**
 * A value nests deeper than the serializer's limit (a runaway recursion in node code, or hostile
 * input); `details.limit` is the limit and `details.path` where it was crossed (shortened).
 */
export class SerializationDepthError extends NonSerializableError {
  constructor(path: string, limit: number) {
    super(
      path.length > 200 ? `${path.slice(0, 200)}…` : path,
      `nested deeper than ${limit} levels`,
    );
    this.details.limit = limit;
  }
}

/** `Command.resume(value)` found more than one pending interrupt in scope; `details.pending` lists them. */
export class AmbiguousResumeError extends ReinError {
  constructor(pending: readonly unknown[]) {
    super(
      ErrorCodes.AMBIGUOUS_RESUME,
      `${pending.length} interrupts are pending in this scope; answer them with Command.resumeMap({ [interruptId]: value }) or narrow the target.`,
      { pending },
    );
  }
}

/** The latest metadata carried by a {@link StaleTargetError}. */
export interface StaleTargetDetails {
  threadId: string;
  runId: string | null;
  runStatus: string | null;
  headCheckpointId: string | null;
  pendingInterrupts: unknown[];
  reason: string;
  [key: string]: unknown;
}

/**
 * A resume or steer addressed something that is no longer current: an interrupt that is not
 * pending, a finished run, a checkpoint that is not the head, or a race another caller won.
 * Nothing was applied. The details carry the latest metadata so the caller can re-decide.
 */
export class StaleTargetError extends ReinError {
  declare readonly details: StaleTargetDetails;
  constructor(message: string, details: StaleTargetDetails) {
    super(ErrorCodes.STALE_TARGET, message, details);
  }
}

/** Why an approval policy refused an answer (see {@link NotAllowedError}). */
export type NotAllowedRuleName = "not_listed" | "requester" | "already_approved" | "no_principal";

/**
 * An interrupt's approval policy does not let this principal answer it: not listed by subject,
 * group or role (`not_listed`), the run's requester under four eyes (`requester`), an approval
 * this principal already gave (`already_approved`), or an answer naming no principal
 * (`no_principal`). Nothing was stored. `details` names the interrupt, the rule and the policy.
 */
export class NotAllowedError extends ReinError {
  declare readonly details: { interruptId: string; rule: NotAllowedRuleName; policy: unknown };
  constructor(
    message: string,
    details: { interruptId: string; rule: NotAllowedRuleName; policy: unknown },
  ) {
    super(ErrorCodes.NOT_ALLOWED, message, details);
  }
}

/** Why one interrupt of a bulk decision was refused. */
export interface BulkRefusal {
  interruptId: string;
  code: "not_allowed" | "stale_target" | "not_found" | "invalid_answer";
  message: string;
}

/**
 * A bulk decision was refused as a whole: at least one interrupt is not pending, not found (or
 * another tenant's), not allowed for the principal, or refuses the value. Nothing was applied;
 * `details.refused` says why for each refused interrupt.
 */
export class BulkRefusedError extends ReinError {
  declare readonly details: { refused: BulkRefusal[] };
  constructor(refused: BulkRefusal[]) {
    super(
      ErrorCodes.BULK_REFUSED,
      `${refused.length} of the interrupts cannot take this decision, so none was applied: ${refused
        .slice(0, 3)
        .map((r) => `${r.interruptId} (${r.code})`)
        .join(
          ", ",
        )}${refused.length > 3 ? ", …" : ""}. Fix or drop those and send the decision again.`,
      { refused },
    );
  }
}

/** A bulk decision by filter matched another number of interrupts than the caller expected. */
export class CountMismatchError extends ReinError {
  declare readonly details: { expected: number; actual: number };
  constructor(expected: number, actual: number) {
    super(
      ErrorCodes.COUNT_MISMATCH,
      `The filter matches ${actual} pending interrupt(s), not the ${expected} expected: the queue changed. Review it and send the decision with the new count.`,
      { expected, actual },
    );
  }
}

/** A resume target matched no pending interrupt; `details.pending` lists what is pending. */
export class NoMatchingTargetError extends ReinError {
  constructor(message: string, details: Record<string, unknown>) {
    super(ErrorCodes.NO_MATCHING_TARGET, message, details);
  }
}

/**
 * Plain input was sent to a thread that waits for answers. Resume it with `Command.resume` /
 * `Command.resumeMap`, or pass `onPending: "cancel"` to drop the pending interrupts.
 */
export class ThreadInterruptedError extends ReinError {
  constructor(threadId: string, pending: readonly unknown[]) {
    super(
      ErrorCodes.THREAD_INTERRUPTED,
      `Thread ${threadId} is waiting on ${pending.length} interrupt(s). Answer with graph.resume(RunConfig.thread(id), Command.resume(value)) or Command.resumeMap({...}); to discard them and start anew pass { onPending: "cancel" }.`,
      { threadId, pending },
    );
  }
}

/** A checkpoint commit lost a compare-and-set race on its parent: another writer moved the head. */
export class CheckpointConflictError extends ReinError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(ErrorCodes.CHECKPOINT_CONFLICT, message, details);
  }
}

/**
 * A request id (an HTTP `Idempotency-Key`) came back with another request than the one it was
 * first used for. Replaying the first outcome would make the caller believe its second request
 * was applied; nothing of it was. Use a fresh key for a new request.
 */
export class IdempotencyKeyReusedError extends ReinError {
  constructor(key: string) {
    super(
      ErrorCodes.IDEMPOTENCY_KEY_REUSED,
      `Idempotency-Key "${key.slice(0, 200)}" was first used with another request; nothing of this one was applied. Send a new key for a new request, or the first request unchanged to get its outcome.`,
      { key: key.slice(0, 200) },
    );
  }
}

/** Another process holds the thread's lease. */
export class ThreadBusyError extends ReinError {
  constructor(threadId: string, owner: string | null) {
    super(
      ErrorCodes.THREAD_BUSY,
      `Thread ${threadId} is being run by ${owner ?? "another process"}; retry when it is idle.`,
      {
        threadId,
        owner,
      },
    );
  }
}

/**
 * The process executing a run is shutting down and handed the run over instead of finishing it:
 * abort a run's signal with this error as the reason and the run stops at its next step boundary,
 * records nothing more (not `cancelled`: its row stays `running`), and its lease is released, so
 * another process continues it from its last checkpoint at once. The step it was in is re-run
 * from its start by the new owner (side effects guarded by `ctx.once` are not repeated).
 */
export class RunHandedOverError extends ReinError {
  /** The run goes on elsewhere: rejoining it, or retrying the call, sees its progress. */
  readonly retryable = true;
  constructor(threadId: string, runId: string) {
    super(
      ErrorCodes.HANDED_OVER,
      `Run ${runId} was handed over by a process shutting down: another process continues it from its last checkpoint. Rejoin the run (or read the thread) to follow it.`,
      { threadId, runId },
    );
  }
}

/**
 * A stream following a run on another process lost some of its events and cannot get them back:
 * the run went on in a new attempt (a takeover after its process lost the database, or a
 * continuation) whose events it cannot join without a gap, or the executor never answered its
 * request to send the missed events again. The run itself is unharmed.
 */
export class EventsMissingError extends ReinError {
  /** Rejoining the run, or reading the thread's state, shows where it is. */
  readonly retryable = true;
  constructor(threadId: string, runId: string, reason: string) {
    super(
      ErrorCodes.EVENTS_MISSING,
      `Some events of run ${runId} may be missing from this stream: ${reason}. The run itself is unharmed: rejoin it to follow it from here, and read the thread's state for what the missing events said.`,
      { threadId, runId },
    );
  }
}

/**
 * A write made on behalf of a run was refused because the writer no longer holds the thread's
 * lease: it was paused (GC, VM, blocked event loop) or cut off from the store longer than the
 * lease lasts, and another process took the thread over. Nothing of the refused write was stored.
 * The call that ran into it may be retried: it then sees the state the new owner left.
 */
export class FencedOutError extends ReinError {
  /** Retrying the call is safe: the refused write changed nothing. */
  readonly retryable = true;
  /**
   * @param currentToken the thread's fencing token in the store, or null when the store has no
   *   lease row (or, with `expired`, was not asked).
   * @param expired true when this process found its own lease expired (a renewal the store
   *   refused or that did not reach it in time), rather than a write the store refused.
   */
  constructor(
    threadId: string,
    token: number | null,
    currentToken: number | null,
    expired = false,
  ) {
    super(
      ErrorCodes.FENCED_OUT,
      `${fencedOutCause(threadId, token, currentToken, expired)} Nothing more was written by this attempt. Retry the call to see the current state.`,
      { threadId, token, currentToken, reason: fencedOutReason(currentToken, expired) },
    );
  }
}

/** Why a writer was fenced out, as a stable word for clients. */
function fencedOutReason(
  currentToken: number | null,
  expired: boolean,
): "lease_expired" | "lease_taken_over" | "lease_gone" {
  if (expired) return "lease_expired";
  return currentToken === null ? "lease_gone" : "lease_taken_over";
}

/** What happened, in words: the three ways a writer loses a thread. */
function fencedOutCause(
  threadId: string,
  token: number | null,
  currentToken: number | null,
  expired: boolean,
): string {
  const mine = `fencing token ${token ?? "none"}`;
  if (expired)
    return `The lease of thread ${threadId} held by this attempt (${mine}) expired before it could be renewed (the store refused the renewal or did not answer in time); another attempt may now hold the thread.`;
  if (currentToken === null)
    return `The lease of thread ${threadId} held by this attempt (${mine}) is no longer in the store (it was released, or the lease table was emptied, e.g. by a database crash or failover).`;
  return `Another attempt took over the lease of thread ${threadId} (the store has fencing token ${currentToken}, this attempt held ${token ?? "none"}), after this attempt's lease expired.`;
}

/**
 * Plain input was sent to a thread whose run is not finished: it is running in another process,
 * it was left running by a process that crashed, or an answer is recorded and not yet applied.
 * Starting a new run beside it would lose that work, so nothing was stored.
 */
export class RunInProgressError extends ReinError {
  constructor(threadId: string, runId: string, status: string) {
    super(
      ErrorCodes.RUN_IN_PROGRESS,
      `Thread ${threadId} has run ${runId} in progress (status "${status}": running elsewhere, left by a crashed process, or holding an answer not yet applied). Continue it with invoke(null, { threadId }) — the recovery sweep does the same — and send new input once it has finished.`,
      { threadId, runId, status },
    );
  }
}

/**
 * The store could not be reached or failed underneath (a dropped connection, a server restart,
 * a disk error). `retryable` says whether the same call may succeed later; `cause` holds the
 * driver's error.
 */
export class StoreUnavailableError extends ReinError {
  /** Whether retrying the call later may succeed (true for connection and availability errors). */
  readonly retryable: boolean;
  constructor(
    message: string,
    options: { cause: unknown; retryable: boolean; driverCode?: string },
  ) {
    super(ErrorCodes.STORE_UNAVAILABLE, message, {
      retryable: options.retryable,
      ...(options.driverCode ? { driverCode: options.driverCode } : {}),
    });
    this.retryable = options.retryable;
    this.cause = options.cause;
  }
}

/** Something addressed by id does not exist. */
export class NotFoundError extends ReinError {
  constructor(what: string, id: string) {
    super(ErrorCodes.NOT_FOUND, `${what} ${id} does not exist.`, { what, id });
  }
}

/** A store's schema is newer than this code understands. */
export class SchemaVersionError extends ReinError {
  constructor(found: number, known: number) {
    super(
      ErrorCodes.SCHEMA_VERSION,
      `The store has schema version ${found} but this Rein knows only up to ${known}; upgrade Rein before opening it.`,
      { found, known },
    );
  }
}

/** The run exceeded its step limit (a loop without an exit). */
export class RecursionLimitError extends ReinError {
  constructor(limit: number) {
    super(
      ErrorCodes.RECURSION_LIMIT,
      `The run took more than ${limit} steps; raise \`recursionLimit\` or check the graph for a loop without an exit.`,
      {
        limit,
      },
    );
  }
}

/** The run was cancelled through its AbortSignal. */
export class CancelledError extends ReinError {
  constructor(reason?: unknown) {
    super(ErrorCodes.CANCELLED, "The run was cancelled.", {
      reason:
        reason === undefined
          ? null
          : reason instanceof Error
            ? reason.message
            : typeof reason === "string"
              ? reason
              : JSON.stringify(reason),
    });
  }
}

/**
 * A failure recorded in a checkpoint: it crossed a process boundary, so it is data, not a live
 * exception with a stack of this process.
 */
export interface NodeFailure {
  node: string;
  taskId: string;
  name: string;
  message: string;
  code?: string;
}

/**
 * The model's answer failed or was cut short: the provider reported an error, or stopped before
 * the answer was whole (an output-token limit, a content filter). The adapters raise it instead
 * of passing a partial answer on as if it were complete; the run records it as its error.
 */
export class ModelResponseError extends ReinError {
  constructor(
    message: string,
    details: {
      /** The client library: `"ai-sdk"`, `"openai"`, `"langchain"`. */
      client: string;
      /** Why: `"failed"`, `"incomplete"`, `"error"`, `"length"`, `"content-filter"`... */
      reason: string;
      /** The provider's own error code or finish reason, when it sent one. */
      providerCode?: string | null;
      /** The response the failure belongs to, when known. */
      responseId?: string | null;
      /**
       * True when the same call may succeed if made again (a stream cut off before its end, a
       * dropped connection, a rate limit); the run's retry policy can read it.
       */
      retryable?: boolean;
      /** What else the provider said about the failure (its error type, a retry-after hint). */
      provider?: Record<string, unknown>;
    },
  ) {
    super(ErrorCodes.MODEL_FAILED, message, details);
  }
}
