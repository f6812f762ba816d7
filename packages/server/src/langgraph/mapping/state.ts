/**
 * A Rein state snapshot as the protocol's `ThreadState`: values, next nodes, the checkpoint as
 * `{ thread_id, checkpoint_ns, checkpoint_id }`, and the tasks of the next step with the
 * interrupts that pause them (a sub-agent's under the root task that runs it).
 */
import type { StateSnapshot } from "@rein/core";
import { lgInterrupt, rootTaskOf, type LgInterrupt } from "./interrupts.ts";
import { messagesOut } from "./messages.ts";

/** A checkpoint reference as the protocol names it (Rein has one root namespace: `""`). */
export interface LgCheckpoint {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string | null;
  checkpoint_map: null;
}

/** A task of the next step (`ThreadTask`). */
export interface LgTask {
  id: string;
  name: string;
  error: string | null;
  interrupts: LgInterrupt[];
  checkpoint: null;
  state: null;
}

/** A thread's state at one checkpoint (`ThreadState`). */
export interface LgThreadState {
  values: Record<string, unknown>;
  next: string[];
  checkpoint: LgCheckpoint;
  metadata: Record<string, unknown>;
  created_at: string | null;
  parent_checkpoint: LgCheckpoint | null;
  tasks: LgTask[];
  /** Pending interrupts at this checkpoint, flat (newer SDKs read them here too). */
  interrupts: LgInterrupt[];
}

/** A checkpoint reference of a thread, or the empty one (`checkpoint_id: null`). */
export function checkpointRef(threadId: string, checkpointId: string | null): LgCheckpoint {
  return {
    thread_id: threadId,
    checkpoint_ns: "",
    checkpoint_id: checkpointId,
    checkpoint_map: null,
  };
}

/** The protocol's `ThreadState` of a snapshot. */
export function threadStateOf(threadId: string, snapshot: StateSnapshot): LgThreadState {
  const tasks = snapshot.tasks.map((t) => ({ id: t.id, node: t.node }));
  return {
    values: messagesOut(snapshot.values),
    next: snapshot.next,
    checkpoint: checkpointRef(threadId, snapshot.checkpointId),
    metadata: { ...snapshot.metadata, step: snapshot.step, source: snapshot.source },
    created_at: snapshot.createdAt,
    parent_checkpoint:
      snapshot.parentCheckpointId === null
        ? null
        : checkpointRef(threadId, snapshot.parentCheckpointId),
    tasks: snapshot.tasks.map((task) => ({
      id: task.id,
      name: task.node,
      error: null,
      interrupts: snapshot.interrupts
        .filter((i) => rootTaskOf(i, tasks) === task.id)
        .map(lgInterrupt),
      checkpoint: null,
      state: null,
    })),
    interrupts: snapshot.interrupts.map(lgInterrupt),
  };
}
