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
