/**
 * Reading Rein's threads and runs as the protocol's `Thread` and `Run`: the thread's graph as its
 * assistant (`metadata.graph_id`, `metadata.assistant_id`), its status mapped from the lease,
 * the queue, pending interrupts and its last run, its values and `interrupts` keyed by task id.
 */
import type { RunRecord, ThreadRecord } from "@rein/core";
import type { ServerContext } from "../context.ts";
import { GraphRegistry, type ServedGraph } from "../registry.ts";
import { isQueuedRoot } from "../run-admission.ts";
import { assistantUuidOf } from "./mapping/assistants.ts";
import { interruptsByTask, type LgInterrupt } from "./mapping/interrupts.ts";
import { messagesOut } from "./mapping/messages.ts";
import {
  cancelReasonOf,
  runStatusOf,
  threadStatusOf,
  type LgRunStatus,
  type LgThreadStatus,
} from "./mapping/status.ts";

/** A thread as the SDK reads it (`Thread` in `@langchain/langgraph-sdk`'s schema). */
export interface LgThread {
  thread_id: string;
  created_at: string;
  updated_at: string;
  state_updated_at: string;
  metadata: Record<string, unknown>;
  status: LgThreadStatus;
  values: Record<string, unknown>;
  interrupts: Record<string, LgInterrupt[]>;
  config: Record<string, unknown>;
  error: string | null;
}

/** A run as the SDK reads it (`Run` in `@langchain/langgraph-sdk`'s schema). */
export interface LgRun {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  created_at: string;
  updated_at: string;
  status: LgRunStatus;
  metadata: Record<string, unknown>;
  multitask_strategy: "reject" | "interrupt" | "rollback" | "enqueue";
  cancel_reason: string | null;
  kwargs: Record<string, unknown>;
}

/** A thread's served graph and the name it is served under. */
export interface ThreadGraph {
  name: string;
  graph: ServedGraph;
}

/** The served graph of a thread, or null when it has none yet (or one this server does not run). */
export async function graphOfThread(
  ctx: ServerContext,
  thread: ThreadRecord,
): Promise<ThreadGraph | null> {
  const name = await GraphRegistry.graphNameOf(ctx.store, thread);
  return name !== null && ctx.registry.names().includes(name)
    ? { name, graph: ctx.registry.get(name) }
    : null;
}

/** A thread's metadata as the protocol shows it: with its graph as `graph_id` / `assistant_id`. */
export function threadMetadata(
  thread: ThreadRecord,
  graph: string | null,
): Record<string, unknown> {
  return graph === null
    ? thread.metadata
    : { ...thread.metadata, graph_id: graph, assistant_id: assistantUuidOf(graph) };
}

/** The protocol's `Thread` of a Rein thread. */
export async function lgThreadOf(ctx: ServerContext, thread: ThreadRecord): Promise<LgThread> {
  const { store } = ctx;
  const threadId = thread.threadId;
  const served = await graphOfThread(ctx, thread);
  const graph = served?.graph ?? null;
  const [snapshot, lease, runs] = await Promise.all([
    graph ? graph.getState({ threadId }) : null,
    store.getLease(threadId),
    store.listRuns(threadId),
  ]);
  const roots = runs.filter((r) => r.parentRunId === null);
  const last = roots.at(-1) ?? null;
  const pending = snapshot?.interrupts ?? [];
  const status = threadStatusOf({
    leased: lease !== undefined,
    queued: roots.some(isQueuedRoot),
    pending: pending.length,
    lastRun: last?.status ?? null,
  });
  return {
    thread_id: threadId,
    created_at: thread.createdAt,
    updated_at: thread.updatedAt,
    state_updated_at: snapshot?.createdAt ?? thread.updatedAt,
    metadata: threadMetadata(thread, served?.name ?? thread.graph ?? null),
    status,
    values: snapshot ? messagesOut(snapshot.values) : {},
    interrupts: snapshot
      ? interruptsByTask(
          pending,
          snapshot.tasks.map((t) => ({ id: t.id, node: t.node })),
        )
      : {},
    config: {},
    error: status === "error" ? (last?.error?.message ?? "The run failed.") : null,
  };
}

/**
 * The protocol's `Thread` of a thread just created without a graph: idle, no values, no
 * interrupts (what {@link lgThreadOf} would read, without the reads).
 */
export function newThreadView(thread: ThreadRecord): LgThread {
  return {
    thread_id: thread.threadId,
    created_at: thread.createdAt,
    updated_at: thread.updatedAt,
    state_updated_at: thread.updatedAt,
    metadata: threadMetadata(thread, null),
    status: "idle",
    values: {},
    interrupts: {},
    config: {},
    error: null,
  };
}

/** The protocol's `Run` of a Rein run. */
export function lgRunOf(run: RunRecord): LgRun {
  const multitask = run.options?.queued?.multitask;
  return {
    run_id: run.runId,
    thread_id: run.threadId,
    assistant_id: assistantUuidOf(run.graph),
    created_at: run.createdAt,
    updated_at: run.updatedAt,
    status: runStatusOf(run.status),
    metadata: {},
    multitask_strategy: multitask ?? "reject",
    cancel_reason: cancelReasonOf(run.status),
    kwargs: {},
  };
}
