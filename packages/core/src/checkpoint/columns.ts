/**
 * Records split into the fields a SQL store keeps as columns and the rest it encodes, so no
 * field is stored twice (once as a column for queries, once inside the encoded record). Reading
 * joins them back; a record encoded whole by an older version still reads, its copies being
 * overwritten by the columns.
 */
import type { InterruptId, RunId, TaskId, ThreadId } from "../ids.ts";
import type { InterruptStatus } from "../types.ts";
import type { RunRecord, StoredInterrupt, TaskResult } from "./types.ts";

/** The columns of an interrupt row that also are fields of its record. */
export interface InterruptColumns {
  id: string;
  thread_id: string;
  run_id: string;
  /** The asking task: the by-task index serves a continuation's read of its tasks' rows. */
  task_id: string;
  graph: string;
  tenant: string | null;
  status: string;
  created_at: string;
}

/** The part of an interrupt a store encodes: all but its column fields (and a set answer). */
export function interruptBody(record: StoredInterrupt): Partial<StoredInterrupt> {
  const body: Partial<StoredInterrupt> = { ...record };
  for (const key of [
    "id",
    "threadId",
    "runId",
    "taskId",
    "graph",
    "tenant",
    "status",
    "createdAt",
  ] as const)
    delete body[key];
  // A set answer lives in the answer columns; an explicit null stays in the body.
  if (body.answer !== undefined) delete body.answer;
  if (body.answeredBy != null) delete body.answeredBy;
  if (body.answeredAt != null) delete body.answeredAt;
  return body;
}

/** The interrupt of a row: the decoded body with its columns laid over it. */
export function joinInterrupt(
  body: Partial<StoredInterrupt>,
  row: InterruptColumns & {
    answer: unknown;
    answered_by: string | null;
    answered_at: string | null;
  },
): StoredInterrupt {
  const record = body as StoredInterrupt;
  record.id = row.id as InterruptId;
  record.threadId = row.thread_id as ThreadId;
  record.runId = row.run_id as RunId;
  record.taskId = row.task_id as TaskId;
  record.graph = row.graph;
  record.tenant = row.tenant;
  record.status = row.status as InterruptStatus;
  record.createdAt = row.created_at;
  if (row.answer !== undefined) record.answer = row.answer;
  if (row.answered_by !== null) record.answeredBy = row.answered_by;
  if (row.answered_at !== null) record.answeredAt = row.answered_at;
  return record;
}

/** The columns of a run row that also are fields of its record. */
export interface RunColumns {
  run_id: string;
  thread_id: string;
  created_at: string;
  updated_at: string;
  status: string;
}

/** A run row as SQL stores read it: its columns and its encoded record. */
export interface EncodedRunRow extends RunColumns {
  record: string;
}

/** A task-result row as SQL stores read it: its task id, its kind and its encoded value. */
export interface EncodedTaskResultRow {
  task_id: string;
  kind: string;
  value: string;
}

/** The part of a run a store encodes: all but its column fields. */
export function runBody(run: RunRecord): Partial<RunRecord> {
  const { runId: _r, threadId: _t, createdAt: _c, updatedAt: _u, status: _s, ...body } = run;
  return body;
}

/** The run of a row: the decoded body with its columns laid over it. */
export function joinRun(body: Partial<RunRecord>, row: RunColumns): RunRecord {
  return {
    ...body,
    runId: row.run_id as RunId,
    threadId: row.thread_id as ThreadId,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    status: row.status as RunRecord["status"],
  } as RunRecord;
}

/** The part of a task result a store encodes: all but its kind and task id (columns). */
export function taskResultBody(result: TaskResult): Partial<TaskResult> {
  const { kind: _k, taskId: _t, ...body } = result;
  return body;
}

/** The task result of a row: the decoded body with its kind and task id. */
export function joinTaskResult(
  body: Partial<TaskResult>,
  row: { kind: string; task_id: string },
): TaskResult {
  return { ...body, kind: row.kind, taskId: row.task_id as TaskId } as TaskResult;
}
