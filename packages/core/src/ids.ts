/**
 * Branded identifiers and the deterministic id functions of the runtime.
 *
 * Task, interrupt and child-run ids are pure functions of where they occur, so a re-run after a
 * resume (in any process) derives the same ids and finds its stored answers and writes.
 */
import * as crypto from "node:crypto";
import { createHash, randomUUID } from "node:crypto";
import { InvalidIdError } from "./errors.ts";

declare const brand: unique symbol;
/** A string that the type system keeps apart from other strings. */
export type Brand<T, B extends string> = T & { readonly [brand]: B };

/** Identifies a conversation / durable execution. Chosen by the caller. */
export type ThreadId = Brand<string, "ThreadId">;
/** Identifies one invocation (root run) or one subgraph execution (child run). */
export type RunId = Brand<string, "RunId">;
/** Identifies one task of one superstep. Deterministic. */
export type TaskId = Brand<string, "TaskId">;
/** Identifies one `interrupt()` call (or static interrupt). Deterministic. */
export type InterruptId = Brand<string, "InterruptId">;
/** Identifies one checkpoint. Time-ordered. */
export type CheckpointId = Brand<string, "CheckpointId">;

/** The longest thread id, in UTF-16 code units (at most 768 bytes of UTF-8). */
export const MAX_THREAD_ID_LENGTH = 256;

/** An unpaired surrogate: text that no store can encode as UTF-8 without changing it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Checks a thread id and returns it branded. One rule for every store: 1 to 256 UTF-16 code
 * units of well-formed Unicode without NUL. An unpaired surrogate would be replaced when a store
 * encodes UTF-8 (two ids would become one thread) and NUL cannot be stored in Postgres text.
 *
 * @throws InvalidIdError naming the broken rule.
 */
export function validateThreadId(threadId: unknown): ThreadId {
  const refuse = (rule: string, why: string): never => {
    throw new InvalidIdError(
      `Thread id ${why}; use 1 to ${MAX_THREAD_ID_LENGTH} characters of well-formed text without NUL.`,
      {
        field: "threadId",
        rule,
      },
    );
  };
  if (typeof threadId !== "string")
    return refuse("type", `must be a string, not ${typeof threadId}`);
  if (threadId.length === 0) return refuse("empty", "is empty");
  if (threadId.length > MAX_THREAD_ID_LENGTH)
    return refuse("length", `is ${threadId.length} characters long`);
  if (threadId.includes("\u0000")) return refuse("nul", "contains a NUL character");
  if (LONE_SURROGATE.test(threadId)) return refuse("surrogate", "contains an unpaired surrogate");
  return threadId as ThreadId;
}

/**
 * Brands an id a caller passed back (from a result, an event or a URL). Ids are opaque: the only
 * checks are that it is a string without NUL (no id Rein makes holds one, and PostgreSQL text
 * cannot), so a wrong value fails as "not found" or as this error on every store, never as a crash.
 *
 * @throws InvalidIdError when the value is not a string, or holds a NUL character.
 */
function brandOf<B extends string>(field: string) {
  return (value: unknown): Brand<string, B> => {
    if (typeof value !== "string")
      throw new InvalidIdError(`${field} must be a string, not ${typeof value}.`, {
        field,
        rule: "type",
      });
    if (value.includes("\u0000"))
      throw new InvalidIdError(`${field} contains a NUL character; pass an id Rein returned.`, {
        field,
        rule: "nul",
      });
    return value as Brand<string, B>;
  };
}

/** A run id passed back by a caller. @throws InvalidIdError when not a string, or with a NUL. */
export const asRunId: (value: unknown) => RunId = brandOf("runId");
/** A task id passed back by a caller. @throws InvalidIdError when not a string, or with a NUL. */
export const asTaskId: (value: unknown) => TaskId = brandOf("taskId");
/** An interrupt id passed back by a caller. @throws InvalidIdError when not a string, or with a NUL. */
export const asInterruptId: (value: unknown) => InterruptId = brandOf("interruptId");
/** A checkpoint id passed back by a caller. @throws InvalidIdError when not a string, or with a NUL. */
export const asCheckpointId: (value: unknown) => CheckpointId = brandOf("checkpointId");

/** One-shot hashing (Node ≥ 20.12) avoids a Hash object per id; older Node uses createHash. */
const oneShot = (
  crypto as { hash?: (algorithm: string, data: string, encoding: "base64url") => string }
).hash;

function digest(parts: readonly (string | number)[]): string {
  const text = parts.join("\u0000");
  const hashed = oneShot
    ? oneShot("sha256", text, "base64url")
    : createHash("sha256").update(text).digest("base64url");
  return hashed.slice(0, 22);
}

/** A fresh root run id. */
export function newRunId(): RunId {
  return randomUUID() as RunId;
}

/**
 * The root run id of a call made with a request id: deterministic, so a retry of the call (after
 * a crash or an ambiguous error) finds the run the first attempt started, and its tasks get the
 * same ids and idempotency keys instead of new ones.
 */
export function requestRunIdFor(threadId: string, requestId: string): RunId {
  return `q_${digest([threadId, requestId])}` as RunId;
}

/** Deterministic task id: (thread, run, namespace, step, node, trigger). */
export function taskIdFor(
  threadId: string,
  runId: string,
  namespace: readonly string[],
  step: number,
  node: string,
  trigger: string,
): TaskId {
  return `t_${digest([threadId, runId, namespace.join("/"), step, node, trigger])}` as TaskId;
}

/**
 * Deterministic interrupt id: (thread, namespace, task, order or key, revision). The revision
 * grows when the determinism guard supersedes an interrupt, so the new question gets a new id.
 */
export function interruptIdFor(
  threadId: string,
  namespace: readonly string[],
  taskId: string,
  slot: string,
  revision: number,
): InterruptId {
  return `i_${digest([threadId, namespace.join("/"), taskId, slot, revision])}` as InterruptId;
}

/** Deterministic child run id: (parent run, parent task, invocation index). */
export function childRunIdFor(parentRunId: string, parentTaskId: string, index: number): RunId {
  return `r_${digest([parentRunId, parentTaskId, index])}` as RunId;
}

let lastMillis = 0;
let counter = 0;

/**
 * A new checkpoint id greater than `after` (when given) and than every id this process made
 * before: 12 hex digits of milliseconds, 6 of a counter, 6 random. Ordering along a thread's
 * lineage is what makes "versions" of a channel sortable.
 */
export function newCheckpointId(after?: string | null): CheckpointId {
  let millis = Date.now();
  if (millis <= lastMillis) {
    millis = lastMillis;
    counter += 1;
  } else {
    lastMillis = millis;
    counter = 0;
  }
  let id = format(millis, counter);
  if (after && id <= after) {
    // Another process with a clock ahead of ours wrote the parent: step just past it.
    const parentMillis = Number.parseInt(after.slice(0, 12), 16);
    const parentCounter = Number.parseInt(after.slice(13, 19), 16);
    lastMillis = parentMillis;
    counter = parentCounter + 1;
    id = format(parentMillis, counter);
  }
  return id as CheckpointId;
}

/** Two hex digits of each byte value: `Number#toString(16)` per id cost more than the commit. */
const HEX_BYTES = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** `n` (0 ≤ n < 2^24) as six hex digits. */
function hex6(n: number): string {
  return (
    (HEX_BYTES[(n >>> 16) & 0xff] as string) +
    (HEX_BYTES[(n >>> 8) & 0xff] as string) +
    (HEX_BYTES[n & 0xff] as string)
  );
}

/** The millisecond part of the last id formatted: one clock reading serves many steps. */
let formattedMillis = -1;
let millisPrefix = "";

function format(millis: number, count: number): string {
  if (millis !== formattedMillis) {
    millisPrefix = `${millis.toString(16).padStart(12, "0")}-`;
    formattedMillis = millis;
  }
  const random = hex6(Math.floor(Math.random() * 0xffffff));
  // A counter past six digits (a parent's counter at its maximum, plus one) keeps every digit.
  const counted = count <= 0xffffff ? hex6(count) : count.toString(16);
  return `${millisPrefix}${counted}-${random}`;
}
