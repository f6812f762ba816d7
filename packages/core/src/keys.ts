/**
 * Every key the runtime writes to disk inside a record, typed, each with its one encoder and one
 * decoder: the checkpoint stream of a run, the trigger of a task, the slot of an interrupt and the
 * version of a channel value. Stores treat these strings as opaque; only this module reads them.
 */
import { InvalidInputError } from "./errors.ts";

/** The stream of the root run: its own key, `""`. */
export const ROOT_STREAM = "";

/** Encoded stream key: `""` for the root run, the child run id for a child run. */
export type StreamKeyText = typeof ROOT_STREAM | (string & {});

/** Which checkpoint stream of a thread: the root run's, or one child run's. */
export type StreamRef = { kind: "root" } | { kind: "child"; runId: string };

/** The stream key of a run: `""` at the root, the child's run id below it. */
export function encodeStream(ref: StreamRef): StreamKeyText {
  return ref.kind === "root" ? ROOT_STREAM : ref.runId;
}

/** Reads a stream key back. */
export function decodeStream(key: string): StreamRef {
  return key === ROOT_STREAM ? { kind: "root" } : { kind: "child", runId: key };
}

/** Encoded trigger of a task: `"edge"`, or `"send:<i>"` for the i-th Send of its step. */
export type TriggerKey = "edge" | `send:${number}`;

/** Why a task runs: an edge, goto or router named its node, or the i-th `Send` of the step. */
export type Trigger = { kind: "edge" } | { kind: "send"; index: number };

/** The stored form of a trigger. */
export function encodeTrigger(trigger: Trigger): TriggerKey {
  return trigger.kind === "edge" ? "edge" : `send:${trigger.index}`;
}

/**
 * Reads a stored trigger.
 *
 * @throws InvalidInputError for text that no trigger encodes to.
 */
export function decodeTrigger(key: string): Trigger {
  if (key === "edge") return { kind: "edge" };
  const match = /^send:(0|[1-9][0-9]*)$/.exec(key);
  if (match) return { kind: "send", index: Number(match[1]) };
  throw new InvalidInputError(`"${key}" is not a task trigger.`, { key });
}

/** Encoded slot of an interrupt: `o:<order>`, `k:<key>`, or `before` / `after` for static ones. */
export type SlotKey = `o:${number}` | `k:${string}` | "before" | "after";

/**
 * Where an interrupt sits within its task: the n-th `interrupt()` call, the call with a given
 * `key`, or the static pause before / after the node. A re-run finds its answer by slot.
 */
export type InterruptSlot =
  | { kind: "order"; order: number }
  | { kind: "key"; key: string }
  | { kind: "before" }
  | { kind: "after" };

/** The stored form of a slot. */
export function encodeSlot(slot: InterruptSlot): SlotKey {
  switch (slot.kind) {
    case "order":
      return `o:${slot.order}`;
    case "key":
      return `k:${slot.key}`;
    default:
      return slot.kind;
  }
}

/**
 * Reads a stored slot.
 *
 * @throws InvalidInputError for text that no slot encodes to.
 */
export function decodeSlot(key: string): InterruptSlot {
  if (key === "before" || key === "after") return { kind: key };
  if (key.startsWith("k:")) return { kind: "key", key: key.slice(2) };
  const match = /^o:(0|[1-9][0-9]*)$/.exec(key);
  if (match) return { kind: "order", order: Number(match[1]) };
  throw new InvalidInputError(`"${key}" is not an interrupt slot.`, { key });
}

/**
 * Encoded channel version: the checkpoint id (a full value written before snapshot budgets), or
 * `<checkpointId>~<depth>` (a delta of that older layout), or `<checkpointId>~<depth>~<room>`.
 */
export type VersionKey = string & {};

/**
 * One stored version of a channel value: written at checkpoint `checkpointId`, `depth` deltas
 * after the last full snapshot (0: the version is a full value).
 */
export interface ChannelVersion {
  checkpointId: string;
  depth: number;
  /**
   * Bytes of deltas the chain may still grow by before the next full snapshot (append channels).
   * Absent in versions written before the budget existed: they follow the depth rule.
   */
  room?: number | undefined;
}

/** The stored form of a version. Checkpoint ids never contain `~`. */
export function encodeVersion(version: ChannelVersion): VersionKey {
  if (version.room !== undefined)
    return `${version.checkpointId}~${version.depth}~${Math.max(0, Math.floor(version.room))}`;
  return version.depth === 0 ? version.checkpointId : `${version.checkpointId}~${version.depth}`;
}

/** Reads a stored version; text without `~` is a full value written at that checkpoint. */
export function decodeVersion(key: string): ChannelVersion {
  const [checkpointId = key, depth, room] = key.split("~");
  if (depth === undefined) return { checkpointId, depth: 0 };
  return {
    checkpointId,
    depth: Number(depth),
    ...(room === undefined ? {} : { room: Number(room) }),
  };
}

/** Prefix of the request ids the HTTP layer derives from an `Idempotency-Key`. */
const HTTP_REQUEST = "http:";

/** The tenant segment of a request id written for a tenant-less (null) caller. */
const NO_TENANT = "-";

/** Marks a request id segment that is percent-encoded (see {@link encodeHttpRequestId}). */
const ESCAPED = "%";

/** Encoded request id of an HTTP request: `http:<tenant>:<thread>:<key>`. */
export type HttpRequestIdText = `http:${string}:${string}:${string}`;

/** Who sent an `Idempotency-Key`, on which thread: what a request id of the HTTP layer stands for. */
export interface HttpRequestRef {
  /** The caller's tenant; `null` for a tenant-less caller. */
  tenant: string | null;
  threadId: string;
  /** The `Idempotency-Key` as sent. */
  key: string;
}

/**
 * A segment of a request id: as is when it reads back unambiguously (no `:`, not empty, not the
 * null tenant's `-`, not starting with `%`), else `%` and its percent-encoding. So every request id
 * written before this encoder existed keeps its exact bytes (a retry across an upgrade still
 * dedupes), except the few that were ambiguous: a tenant named `-` or `""` (read as the null
 * tenant's or as an empty segment) and a tenant or thread id holding `:` (which could meet
 * another tenant's or thread's id). Those are written escaped now.
 */
function encodeSegment(text: string, tenant: boolean): string {
  const plain =
    text !== "" &&
    !text.includes(":") &&
    !text.startsWith(ESCAPED) &&
    !(tenant && text === NO_TENANT);
  return plain ? text : ESCAPED + encodeURIComponent(text);
}

function decodeSegment(text: string): string {
  return text.startsWith(ESCAPED) ? decodeURIComponent(text.slice(ESCAPED.length)) : text;
}

/** The request id of a keyed HTTP request, scoped by tenant and thread. */
export function encodeHttpRequestId(ref: HttpRequestRef): HttpRequestIdText {
  const tenant = ref.tenant === null ? NO_TENANT : encodeSegment(ref.tenant, true);
  return `${HTTP_REQUEST}${tenant}:${encodeSegment(ref.threadId, false)}:${ref.key}`;
}

/**
 * Reads a request id of the HTTP layer back.
 *
 * @throws InvalidInputError for text that no HTTP request encodes to.
 */
export function decodeHttpRequestId(text: string): HttpRequestRef {
  const match = /^http:([^:]+):([^:]+):(.*)$/s.exec(text);
  if (!match) throw new InvalidInputError(`"${text}" is not an HTTP request id.`, { text });
  const [, tenant = "", threadId = "", key = ""] = match;
  try {
    return {
      tenant: tenant === NO_TENANT ? null : decodeSegment(tenant),
      threadId: decodeSegment(threadId),
      key,
    };
  } catch {
    throw new InvalidInputError(`"${text}" is not an HTTP request id.`, { text });
  }
}

/** Encoded idempotency key of a task's side effect: `rein:<thread>:<task>:<key>`. */
export type IdempotencyKeyText = `rein:${string}:${string}:${string}`;

/** The side effect an idempotency key names: `ctx.idempotencyKey(key)` of one task of a thread. */
export interface IdempotencyRef {
  threadId: string;
  /** A task id (`t_…`; task ids hold no `:`). */
  taskId: string;
  key: string;
}

/**
 * The key a node hands to an external API (`ctx.idempotencyKey`): the same on every re-run of the
 * task. Its bytes never change: an API that saw a key before must see it again on a retry.
 */
export function encodeIdempotencyKey(ref: IdempotencyRef): IdempotencyKeyText {
  return `rein:${ref.threadId}:${ref.taskId}:${ref.key}`;
}

/**
 * Reads an idempotency key back. Task ids are `t_` and a digest without `:`, so the task segment is
 * the last such segment before the key (a thread id may hold `:`, a key too).
 *
 * @throws InvalidInputError for text that no idempotency key encodes to.
 */
export function decodeIdempotencyKey(text: string): IdempotencyRef {
  const match = /^rein:(.+):(t_[^:]+):(.*)$/s.exec(text);
  if (!match) throw new InvalidInputError(`"${text}" is not an idempotency key.`, { text });
  const [, threadId = "", taskId = "", key = ""] = match;
  return { threadId, taskId, key };
}

/**
 * Prefix of the once-keys that count `ctx.once` attempts. User keys cannot start with it, so no
 * user key meets a marker.
 */
export const ATTEMPT_MARK = "\u0001";

/** Encoded attempt marker of `ctx.once`: `\u0001attempt:<n>:<key>`. */
export type AttemptMarkerText = `\u0001attempt:${number}:${string}`;

/** The n-th attempt (from 1) of `ctx.once(key)`. */
export interface AttemptRef {
  attempt: number;
  key: string;
}

/** The once-key that records the start of an attempt of `ctx.once(key)`. */
export function encodeAttemptMarker(ref: AttemptRef): AttemptMarkerText {
  return `${ATTEMPT_MARK}attempt:${ref.attempt}:${ref.key}`;
}

/**
 * Reads an attempt marker back.
 *
 * @throws InvalidInputError for text that is not an attempt marker (a user's once-key).
 */
export function decodeAttemptMarker(text: string): AttemptRef {
  const match = text.startsWith(ATTEMPT_MARK)
    ? /^attempt:([1-9][0-9]*):(.*)$/s.exec(text.slice(ATTEMPT_MARK.length))
    : null;
  if (!match) throw new InvalidInputError(`"${text}" is not an attempt marker.`, { text });
  return { attempt: Number(match[1]), key: match[2] ?? "" };
}

/** Prefix of the thread ids of ephemeral runs (`runEphemeral`, no thread id given). */
const EPHEMERAL = "ephemeral-";

/** Encoded thread id of an ephemeral run: `ephemeral-<uuid>`. */
export type EphemeralThreadIdText = `ephemeral-${string}`;

/** The thread id of an ephemeral run, made unique by `uuid`. */
export function encodeEphemeralThreadId(uuid: string): EphemeralThreadIdText {
  return `${EPHEMERAL}${uuid}`;
}

/**
 * The uuid of an ephemeral run's thread id.
 *
 * @throws InvalidInputError for a thread id that no ephemeral run was given.
 */
export function decodeEphemeralThreadId(threadId: string): string {
  if (!threadId.startsWith(EPHEMERAL) || threadId.length === EPHEMERAL.length)
    throw new InvalidInputError(`"${threadId}" is not an ephemeral thread id.`, { threadId });
  return threadId.slice(EPHEMERAL.length);
}
