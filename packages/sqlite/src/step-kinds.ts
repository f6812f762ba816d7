/**
 * `getTaskResultKinds` for SQLite: every result's kind of a step, or, for a caller that looks at
 * a few tasks only, their kinds and the step's counts read from indexes (see `StepKinds`).
 */
import type { CheckpointId, TaskId, ThreadId } from "@rein/core";
import type { NarrowReadStore, StepKinds, StreamKey, TaskResultKind } from "@rein/core/store";
import { settle } from "./errors.ts";
import type { Statements } from "./statements.ts";

/** The statements build the records ({ taskId, kind }) in order, as one JSON array. */
function kinds(row: { kinds: string } | undefined): TaskResultKind[] {
  return row ? (JSON.parse(row.kinds) as TaskResultKind[]) : [];
}

/** The store's `getTaskResultKinds` on `sql`. */
export function stepKindsReader(sql: Statements): NarrowReadStore["getTaskResultKinds"] {
  function read(
    thread: ThreadId,
    stream: StreamKey,
    checkpoint: CheckpointId,
  ): Promise<TaskResultKind[]>;
  function read(
    thread: ThreadId,
    stream: StreamKey,
    checkpoint: CheckpointId,
    focus: readonly TaskId[],
  ): Promise<TaskResultKind[] | StepKinds>;
  function read(
    thread: ThreadId,
    stream: StreamKey,
    checkpoint: CheckpointId,
    focus?: readonly TaskId[],
  ): Promise<TaskResultKind[] | StepKinds> {
    return settle(() => {
      if (focus === undefined) return kinds(sql.taskResultKinds.get(thread, stream, checkpoint));
      const focused = JSON.stringify(focus);
      const row = sql.stepKinds.get({ thread, stream, checkpoint, focus: focused });
      return { focus: kinds(row), recorded: row?.recorded ?? 0, paused: row?.paused === 1 };
    });
  }
  return read;
}
