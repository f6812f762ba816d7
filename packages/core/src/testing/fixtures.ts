/**
 * Builders of valid records for checkpointer tests. Each takes the fields a test cares about and
 * fills the rest with plausible values, so a spec reads as the behaviour it checks.
 */
import type {
  ChannelBlob,
  CheckpointRecord,
  RunRecord,
  StepCommit,
  StoredInterrupt,
  TaskOutcome,
  TaskResult,
  ThreadRecord,
} from "../checkpoint/types.ts";
import type { CheckpointId, InterruptId, RunId, TaskId, ThreadId } from "../ids.ts";
import type { AuditRecord, SteeringRecord } from "../types.ts";

/** Brands a literal as a {@link ThreadId}. */
export const threadId = (id: string): ThreadId => id as ThreadId;
/** Brands a literal as a {@link RunId}. */
export const runId = (id: string): RunId => id as RunId;
/** Brands a literal as a {@link TaskId}. */
export const taskId = (id: string): TaskId => id as TaskId;
/** Brands a literal as an {@link InterruptId}. */
export const interruptId = (id: string): InterruptId => id as InterruptId;

/** A checkpoint id that sorts by `n` (ids are time-ordered in real use). */
export function checkpointId(n: number): CheckpointId {
  return `${n.toString(16).padStart(12, "0")}-000000-000000` as CheckpointId;
}

/** An ISO timestamp `seconds` after a fixed epoch, so orderings in tests are explicit. */
export function at(seconds: number): string {
  return new Date(Date.UTC(2025, 0, 1) + seconds * 1000).toISOString();
}

/** A thread record. */
export function makeThread(id: string, over: Partial<ThreadRecord> = {}): ThreadRecord {
  return {
    threadId: threadId(id),
    tenant: null,
    metadata: {},
    createdAt: at(0),
    updatedAt: at(0),
    ...over,
  };
}

/** A checkpoint record on the root stream of `thread`. */
export function makeCheckpoint(
  thread: string,
  id: CheckpointId,
  over: Partial<CheckpointRecord> = {},
): CheckpointRecord {
  return {
    threadId: threadId(thread),
    stream: "",
    id,
    parentId: null,
    runId: runId("run-1"),
    step: 0,
    versions: {},
    next: [],
    source: "loop",
    createdAt: at(0),
    metadata: {},
    ...over,
  };
}

/** A step commit of `checkpoint` expecting `expectedHeadId`, with optional blobs and rows. */
export function makeCommit(
  checkpoint: CheckpointRecord,
  expectedHeadId: CheckpointId | null,
  over: Partial<Omit<StepCommit, "checkpoint" | "expectedHeadId">> = {},
): StepCommit {
  return { checkpoint, expectedHeadId, blobs: [], ...over };
}

/** A `full` channel blob. */
export function fullBlob(channel: string, version: string, value: unknown): ChannelBlob {
  return { channel, version, kind: "full", prev: null, value };
}

/** A `delta` channel blob appending `items` to version `prev`. */
export function deltaBlob(
  channel: string,
  version: string,
  prev: string,
  items: unknown[],
): ChannelBlob {
  return { channel, version, kind: "delta", prev, value: items };
}

/** A pending dynamic interrupt of `thread`. */
export function makeInterrupt(
  thread: string,
  id: string,
  over: Partial<StoredInterrupt> = {},
): StoredInterrupt {
  return {
    id: interruptId(id),
    runId: runId("run-1"),
    threadId: threadId(thread),
    node: "review",
    taskId: taskId("task-1"),
    namespace: [],
    order: 0,
    payload: { question: `approve ${id}?` },
    kind: "dynamic",
    status: "pending",
    checkpointId: checkpointId(1),
    createdAt: at(0),
    stream: "",
    slot: "o:0",
    revision: 0,
    path: [{ runId: runId("run-1"), graph: "agent", node: "review", taskId: taskId("task-1") }],
    graph: "agent",
    tenant: null,
    ...over,
  };
}

/** A `writes` task result. */
export function writesResult(
  task: string,
  writes: [string, unknown][] = [],
  node = "work",
): TaskResult {
  return { kind: "writes", taskId: taskId(task), node, writes, gotos: [], sends: [] };
}

/** A `paused` task result. */
export function pausedResult(task: string, node = "review"): TaskResult {
  return { kind: "paused", taskId: taskId(task), node };
}

/** A task outcome on the root stream of `thread` at checkpoint `checkpoint`. */
export function makeOutcome(
  thread: string,
  checkpoint: CheckpointId,
  result: TaskResult,
  over: Partial<Omit<TaskOutcome, "result">> = {},
): TaskOutcome {
  return {
    threadId: threadId(thread),
    stream: "",
    checkpointId: checkpoint,
    result,
    interrupts: [],
    superseded: [],
    ...over,
  };
}

/** A root run record of `thread`. */
export function makeRun(thread: string, id: string, over: Partial<RunRecord> = {}): RunRecord {
  return {
    runId: runId(id),
    threadId: threadId(thread),
    parentRunId: null,
    parentTaskId: null,
    graph: "agent",
    namespace: [],
    stream: "",
    status: "running",
    createdAt: at(0),
    updatedAt: at(0),
    ...over,
  };
}

/** A steering record of `thread`. */
export function makeSteering(
  thread: string,
  id: string,
  over: Partial<SteeringRecord> = {},
): SteeringRecord {
  return {
    id,
    threadId: threadId(thread),
    runId: runId("run-1"),
    namespace: [],
    text: `instruction ${id}`,
    actor: "alice@example.com",
    checkpointId: null,
    createdAt: at(0),
    ...over,
  };
}

/** An audit record of `thread`. */
export function makeAudit(
  thread: string,
  id: string,
  over: Partial<AuditRecord> = {},
): AuditRecord {
  return {
    id,
    threadId: threadId(thread),
    runId: runId("run-1"),
    action: "steer",
    actor: "alice@example.com",
    data: { note: id },
    createdAt: at(0),
    ...over,
  };
}

/** Resolves after `ms` milliseconds (lease expiry tests). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * One support-desk run tree's questions as the runtime records them: the root run's own, and one
 * from each of two sub-agents (`refund_agent`, `email_agent`), whose path starts at the root.
 */
export function treeInterrupts(): StoredInterrupt[] {
  return [
    makeInterrupt("t1", "i_root", {
      graph: "support-desk",
      path: [
        { runId: runId("run-1"), graph: "support-desk", node: "review", taskId: taskId("task-1") },
      ],
    }),
    ...(["refund", "email"] as const).map((agent) =>
      makeInterrupt("t1", `i_${agent}`, {
        graph: `${agent}_agent`,
        runId: runId(`r_${agent}`),
        path: [
          {
            runId: runId("root"),
            graph: "support-desk",
            node: agent,
            taskId: taskId(`t_${agent}`),
          },
          {
            runId: runId(`r_${agent}`),
            graph: `${agent}_agent`,
            node: "review",
            taskId: taskId("task-1"),
          },
        ],
      }),
    ),
  ];
}
