/**
 * The step barrier: folds the writes of a finished step into the state through the channels'
 * reducers, decides the versions and blobs to store, and schedules the next step's tasks.
 */
import { appendedItems, DuplicateWriteError } from "../channels.ts";
import type { ChannelBlob, TaskResult, TaskSpec } from "../checkpoint/types.ts";
import { InvalidUpdateError } from "../errors.ts";
import { taskIdFor, type RunId, type ThreadId } from "../ids.ts";
import { Send, isSend } from "../graph/command.ts";
import { END, type GraphDefinition } from "../graph/definition.ts";
import { decodeVersion, encodeTrigger, encodeVersion } from "../keys.ts";
import { jsonSerializer } from "../serde.ts";

type Writes = Extract<TaskResult, { kind: "writes" }>;

/** The ids a run's next tasks derive their ids from (an `Execution` is one). */
export interface TaskIdBasis {
  readonly threadId: ThreadId;
  readonly runId: RunId;
  readonly namespace: readonly string[];
}

/**
 * Versions written before snapshot budgets (`<id>~<depth>`) snapshot once every this many
 * versions, as they always did; their next snapshot starts a budgeted chain.
 */
export const SNAPSHOT_EVERY = 64;

/**
 * An append channel writes deltas until the bytes appended since its last full snapshot exceed
 * this many times that snapshot's size (at least {@link MIN_SNAPSHOT_ROOM}). Snapshot sizes then
 * grow geometrically, so all snapshots together stay within (1 + 1/F) times the value, and total
 * bytes within (2 + 1/F) times the payload at worst (about 1.5× on average).
 */
export const SNAPSHOT_FACTOR = 3;

/** Bytes of deltas a small value may gather before its next snapshot (tiny values stay chains). */
export const MIN_SNAPSHOT_ROOM = 64 * 1024;

/**
 * Longest delta chain: a read rebuilds at most this many links, whatever the item sizes (many
 * tiny items would otherwise grow a chain without bound before their bytes call for a snapshot).
 */
export const MAX_CHAIN = 1024;

/** Approximate stored size of a value (the default serializer's text length). */
function sizeOf(value: unknown): number {
  try {
    return jsonSerializer.serialize(value).length;
  } catch {
    return Number.MAX_SAFE_INTEGER;
  }
}

/** The delta version that extends `prev` by `bytes`, or null when a snapshot is due. */
function nextDelta(prev: string | null, bytes: number, newVersion: string): string | null {
  if (prev === null) return null;
  const { depth, room } = decodeVersion(prev);
  if (room === undefined)
    return depth + 1 < SNAPSHOT_EVERY
      ? encodeVersion({ checkpointId: newVersion, depth: depth + 1 })
      : null;
  if (bytes > room || depth + 1 > MAX_CHAIN) return null;
  return encodeVersion({ checkpointId: newVersion, depth: depth + 1, room: room - bytes });
}

/** State after a barrier, and what to store for it. */
export interface BarrierOutcome {
  values: Record<string, unknown>;
  versions: Record<string, string>;
  blobs: ChannelBlob[];
  /** Per node, the updates it wrote (for `updates` events and checkpoint metadata). */
  writers: string[];
}

/**
 * Applies the writes of `results` (in task order) to `values`.
 *
 * @throws InvalidUpdateError for an unknown channel, or two writes to a last-value channel in one
 *   step (naming both nodes).
 */
export function applyWrites(
  graph: GraphDefinition,
  values: Record<string, unknown>,
  versions: Record<string, string>,
  results: readonly Writes[],
  newVersion: string,
): BarrierOutcome {
  const updates = new Map<string, { values: unknown[]; writers: string[] }>();
  for (const result of results) {
    for (const [channel, value] of result.writes) {
      if (!(channel in graph.schema))
        throw new InvalidUpdateError(
          `Node "${result.node}" wrote to unknown channel "${channel}"; the state has ${Object.keys(graph.schema).join(", ")}.`,
          {
            node: result.node,
            channel,
          },
        );
      let entry = updates.get(channel);
      if (!entry) updates.set(channel, (entry = { values: [], writers: [] }));
      entry.values.push(value);
      entry.writers.push(result.node);
    }
  }
  const nextValues = { ...values };
  const nextVersions = { ...versions };
  const blobs: ChannelBlob[] = [];
  for (const [name, channel] of Object.entries(graph.schema)) {
    const entry = updates.get(name);
    if (!entry) {
      // Ephemeral values live for one step only.
      if (channel.kind === "ephemeral" && nextVersions[name] !== undefined) {
        nextValues[name] = undefined;
        delete nextVersions[name];
      }
      continue;
    }
    try {
      nextValues[name] = channel.reduce(values[name], entry.values, entry.writers, name);
    } catch (error) {
      if (error instanceof DuplicateWriteError)
        throw new InvalidUpdateError(error.message, { channel: name, nodes: entry.writers });
      throw error;
    }
    const prev = versions[name] ?? null;
    if (channel.kind !== "append") {
      blobs.push({
        channel: name,
        version: newVersion,
        kind: "full",
        prev: null,
        value: nextValues[name],
      });
      nextVersions[name] = newVersion;
      continue;
    }
    // Only what this step appended; the version records how long the chain has grown and how
    // many more bytes it may take before the next snapshot.
    const appended = appendedItems(entry.values);
    const delta = nextDelta(prev, prev === null ? 0 : sizeOf(appended), newVersion);
    if (delta !== null) {
      blobs.push({ channel: name, version: delta, kind: "delta", prev, value: appended });
      nextVersions[name] = delta;
    } else {
      const room = Math.max(MIN_SNAPSHOT_ROOM, SNAPSHOT_FACTOR * sizeOf(nextValues[name]));
      const version = encodeVersion({ checkpointId: newVersion, depth: 0, room });
      blobs.push({ channel: name, version, kind: "full", prev: null, value: nextValues[name] });
      nextVersions[name] = version;
    }
  }
  return { values: nextValues, versions: nextVersions, blobs, writers: results.map((r) => r.node) };
}

/**
 * Tasks of the next step: edges and routers of the nodes that ran, `Command` gotos and Sends.
 * A node reached several ways runs once; each Send is a task of its own.
 */
export async function scheduleNext(
  graph: GraphDefinition,
  ids: TaskIdBasis,
  ran: readonly Writes[] | readonly string[],
  state: Record<string, unknown>,
  step: number,
): Promise<TaskSpec[]> {
  const nodes: string[] = [];
  const sends: Send[] = [];
  const add = (target: string | Send): void => {
    if (isSend(target)) {
      if (!graph.nodes.has(target.node))
        throw new InvalidUpdateError(`Send to unknown node "${target.node}".`, {
          node: target.node,
        });
      sends.push(target);
    } else if (target !== END) {
      if (!graph.nodes.has(target))
        throw new InvalidUpdateError(`Cannot go to unknown node "${target}".`, { node: target });
      if (!nodes.includes(target)) nodes.push(target);
    }
  };
  for (const item of ran) {
    const from = typeof item === "string" ? item : item.node;
    if (typeof item !== "string") {
      for (const node of item.gotos) add(node);
      for (const send of item.sends) add(new Send(send.node, send.arg));
    }
    for (const to of graph.edges.get(from) ?? []) add(to);
    for (const branch of graph.branches.get(from) ?? []) {
      const picked = await branch.router(state);
      const list = Array.isArray(picked)
        ? (picked as (string | Send)[])
        : [picked as string | Send];
      for (const target of list) {
        if (isSend(target)) add(target);
        else {
          const mapped = branch.pathMap ? branch.pathMap[target] : target;
          if (mapped === undefined)
            throw new InvalidUpdateError(
              `Router of "${from}" returned "${target}", which its path map does not name.`,
              { from, target },
            );
          add(mapped);
        }
      }
    }
  }
  const { threadId, runId, namespace: ns } = ids;
  const next: TaskSpec[] = nodes.map((node) => ({
    id: taskIdFor(threadId, runId, ns, step, node, encodeTrigger({ kind: "edge" })),
    node,
    trigger: encodeTrigger({ kind: "edge" }),
  }));
  sends.forEach((send, index) => {
    const trigger = encodeTrigger({ kind: "send", index });
    next.push({
      id: taskIdFor(threadId, runId, ns, step, send.node, trigger),
      node: send.node,
      trigger,
      arg: send.arg,
    });
  });
  return next;
}
