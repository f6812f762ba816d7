/**
 * Records split into the fields a SQL store keeps as columns and the rest it encodes, so no
 * field is stored twice (once as a column for queries, once inside the encoded record). Reading
 * joins them back; a record encoded whole by an older version still reads, its copies being
 * overwritten by the columns.
 */
import type { InterruptId, RunId, TaskId, ThreadId } from "../ids.ts";
import { ROOT_STREAM } from "../keys.ts";
import type { InterruptStatus, RunPathEntry } from "../types.ts";
import type { ApprovalProgress, StoredApprovalPolicy } from "./approvals.ts";
import type { RunRecord, StoredInterrupt, StreamKey, TaskResult } from "./types.ts";

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
  deadline: string | null;
}

/**
 * The root graph of an interrupt's run tree (the app the queue filters by): the graph of the
 * first path entry, the interrupt's own graph when it has no path.
 */
export function rootGraphOf(record: Pick<StoredInterrupt, "path" | "graph">): string {
  return record.path[0]?.graph ?? record.graph;
}

/** The column values of an interrupt: the fields {@link interruptBody} leaves out. */
export function interruptColumns(record: StoredInterrupt): InterruptColumns {
  return {
    id: record.id,
    thread_id: record.threadId,
    run_id: record.runId,
    task_id: record.taskId,
    graph: record.graph,
    tenant: record.tenant,
    status: record.status,
    created_at: record.createdAt,
    deadline: record.deadline ?? null,
  };
}

/**
 * An interrupt as encoded: the record without its column fields, its defaults or the last entry
 * of its path. That entry is the asking task itself (its run, graph, node and task id, all
 * columns or fields already), so only the entries above it are kept, as `up`. A body with a
 * `path` was encoded whole by an older version and reads as it was.
 */
type InterruptBody = Partial<StoredInterrupt> & { up?: RunPathEntry[] };

/** Fields an interrupt record always has, with the value a body leaves out. */
const INTERRUPT_DEFAULTS = { namespace: [] as string[], stream: ROOT_STREAM as StreamKey } as const;

/**
 * Fields a body leaves out at their default: those above (filled back on read) and the optional
 * ones whose null reads back absent.
 */
const INTERRUPT_DROPPED = [
  ...keysOf(INTERRUPT_DEFAULTS),
  "onTimeout",
  "answerSchema",
  "ladder",
] as const;

/** The record fields kept in an interrupt row's columns, not in its body. */
const INTERRUPT_COLUMN_FIELDS = [
  "id",
  "threadId",
  "runId",
  "taskId",
  "graph",
  "tenant",
  "status",
  "createdAt",
  "deadline",
] as const;

/** The part of an interrupt a store encodes: all but its column fields (and a set answer). */
export function interruptBody(record: StoredInterrupt): InterruptBody {
  const body: InterruptBody = { ...record };
  for (const key of INTERRUPT_COLUMN_FIELDS) delete body[key];
  // The approval policy and progress are columns of their own (the answer checks them).
  delete body.policy;
  delete body.approvals;
  // So is the ladder's stage (the timer's step writes it, conditionally).
  delete body.stage;
  // A set answer lives in the answer columns; an explicit null stays in the body.
  if (body.answer !== undefined) delete body.answer;
  if (body.answeredBy != null) delete body.answeredBy;
  if (body.answeredAt != null) delete body.answeredAt;
  dropDefaults(body, INTERRUPT_DROPPED);
  const self = record.path.at(-1);
  if (self && isAskingTask(self, record)) {
    delete body.path;
    if (record.path.length > 1) body.up = record.path.slice(0, -1);
  }
  return body;
}

/** Whether a path entry is the interrupt's own task, so its columns rebuild it. */
function isAskingTask(entry: RunPathEntry, record: StoredInterrupt): boolean {
  return (
    entry.runId === record.runId &&
    entry.graph === record.graph &&
    entry.node === record.node &&
    entry.taskId === record.taskId
  );
}

/** The interrupt of a row: the decoded body with its columns laid over it. */
export function joinInterrupt(
  body: InterruptBody,
  row: InterruptColumns & {
    answer: unknown;
    answered_by: string | null;
    answered_at: string | null;
    /** The decoded `policy` and `approvals` columns (absent or null: none). */
    policy?: StoredApprovalPolicy | null | undefined;
    approvals?: ApprovalProgress | null | undefined;
    /** The `stage` column (absent or null: no ladder step taken). */
    stage?: string | null | undefined;
  },
): StoredInterrupt {
  const { up, ...rest } = body;
  const record = rest as StoredInterrupt;
  record.id = row.id as InterruptId;
  record.threadId = row.thread_id as ThreadId;
  record.runId = row.run_id as RunId;
  record.taskId = row.task_id as TaskId;
  record.graph = row.graph;
  record.tenant = row.tenant;
  record.status = row.status as InterruptStatus;
  record.createdAt = row.created_at;
  if (row.deadline !== null) record.deadline = row.deadline;
  fillDefaults(record, INTERRUPT_DEFAULTS);
  record.path ??= [
    ...(up ?? []),
    { runId: record.runId, graph: record.graph, node: record.node, taskId: record.taskId },
  ];
  if (row.answer !== undefined) record.answer = row.answer;
  if (row.answered_by !== null) record.answeredBy = row.answered_by;
  if (row.answered_at !== null) record.answeredAt = row.answered_at;
  if (row.policy) record.policy = row.policy;
  if (row.approvals) record.approvals = row.approvals;
  if (row.stage === "reminded" || row.stage === "escalated") record.stage = row.stage;
  return record;
}

/** The keys of a defaults table, typed. */
function keysOf<T extends object>(table: T): (keyof T)[] {
  return Object.keys(table) as (keyof T)[];
}

/** Deletes the fields `keys` of `body` that hold a default (a null, an empty string or list). */
function dropDefaults<T extends object>(body: T, keys: readonly (keyof T)[]): void {
  for (const key of keys) {
    const value = body[key];
    if (value === null || value === "" || (Array.isArray(value) && value.length === 0))
      delete body[key];
  }
}

/** Sets every field of `defaults` that `record` lacks (a fresh empty list each time). */
function fillDefaults<T extends object>(
  record: T,
  defaults: Partial<Record<keyof T, unknown>>,
): void {
  const target = record as Record<keyof T, unknown>;
  for (const [key, value] of Object.entries(defaults) as [keyof T, unknown][])
    if (target[key] === undefined) target[key] = Array.isArray(value) ? [] : value;
}

/** The columns of a run row that also are fields of its record. */
export interface RunColumns {
  run_id: string;
  thread_id: string;
  created_at: string;
  updated_at: string;
  status: string;
}

/** The column values of a run: the fields {@link runBody} leaves out. */
export function runColumns(run: RunRecord): RunColumns {
  return {
    run_id: run.runId,
    thread_id: run.threadId,
    created_at: run.createdAt,
    updated_at: run.updatedAt,
    status: run.status,
  };
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

/** Fields a run record always has, with the value a body leaves out. */
const RUN_DEFAULTS = {
  parentRunId: null,
  parentTaskId: null,
  namespace: [] as string[],
  stream: ROOT_STREAM as StreamKey,
} as const;

/** Fields a run body leaves out at their default: those above, and a null error or options. */
const RUN_DROPPED = [...keysOf(RUN_DEFAULTS), "error", "options"] as const;

/** The part of a run a store encodes: all but its column fields and its defaults. */
export function runBody(run: RunRecord): Partial<RunRecord> {
  const { runId: _r, threadId: _t, createdAt: _c, updatedAt: _u, status: _s, ...body } = run;
  dropDefaults<Partial<RunRecord>>(body, RUN_DROPPED);
  return body;
}

/** The run of a row: the decoded body with its columns and defaults laid over it. */
export function joinRun(body: Partial<RunRecord>, row: RunColumns): RunRecord {
  const run = {
    ...body,
    runId: row.run_id as RunId,
    threadId: row.thread_id as ThreadId,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    status: row.status as RunRecord["status"],
  } as RunRecord;
  fillDefaults(run, RUN_DEFAULTS);
  return run;
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
