/**
 * Turning an HTTP request into a run: which run id it will have, the resume command and target
 * it carries, the checks that must hold before anything starts.
 */
import { randomUUID } from "node:crypto";
import {
  ROOT_STREAM,
  InvalidInputError,
  ThreadBusyError,
  type ResumeTarget,
  type ThreadId,
  type ThreadRecord,
  requestRunIdFor,
} from "@rein/core";
import type { z } from "zod";
import type { Principal } from "./auth.ts";
import { answerPrincipal } from "./auth.ts";
import type { ServerContext } from "./context.ts";
import { withoutLeaseWait, type ServedGraph } from "./registry.ts";
import type { ResumeFields } from "@rein/wire";
import {
  ALL_MODES,
  WITH_MESSAGES,
  buildCommand,
  type ActiveRun,
  type RunWork,
} from "./run-manager.ts";
import { firstAttempt, isQueuedRoot } from "./run-admission.ts";
import { assertHead, type ThreadHead } from "./thread-access.ts";
import { runIdOf } from "./ids.ts";

/**
 * Refuses input naming a channel the graph does not have, before the run starts: the run would
 * fail on it anyway, and only after acting on the thread (an `onPending: "cancel"`).
 *
 * @throws InvalidInputError listing the graph's channels.
 */
export function assertChannels(graph: ServedGraph, input: Record<string, unknown>): void {
  const channels = Object.keys(graph.definition.schema);
  const unknown = Object.keys(input).filter((key) => !channels.includes(key));
  if (unknown.length > 0)
    throw new InvalidInputError(
      `Input names channels graph "${graph.name}" does not have: ${unknown.join(", ").slice(0, 300)}. Its channels: ${channels.join(", ")}.`,
      { unknown: unknown.slice(0, 20), channels },
    );
}

/** Per-run options of a start request. */
export interface LaunchOptions {
  interruptBefore?: string[] | undefined;
  interruptAfter?: string[] | undefined;
  onPending?: "error" | "cancel" | undefined;
  /** Also stream a model's deltas (`messages` events) to the run's hub. */
  streamMessages?: boolean | undefined;
  /**
   * Run from this past checkpoint of the thread instead of its head: a fork, always a new run
   * (with input: the input applied to that state; with `null`: that checkpoint's next step run).
   */
  checkpointId?: string | undefined;
}

/** The fields of an answer as validated. */
export type ResumeRequest = z.infer<typeof ResumeFields>;

/**
 * The run work of an answer, with what can be checked before the run: exactly one of `resume`
 * and `resumeMap`, and without a target the expected head (against `head`, when the caller read
 * it). A target's run is checked by core, under the thread's lease, in the lease's own round
 * trip (a run of another thread is not found, as a run that does not exist).
 *
 * @throws InvalidInputError, StaleTargetError.
 */
export async function resumeWork(
  ctx: ServerContext,
  threadId: ThreadId,
  fields: ResumeRequest,
  raw: unknown,
  principal: Principal,
  requestId: string | undefined,
  head?: ThreadHead,
): Promise<RunWork> {
  const hasResume = typeof raw === "object" && raw !== null && Object.hasOwn(raw, "resume");
  if (hasResume === (fields.resumeMap !== undefined))
    throw new InvalidInputError(
      "Send exactly one of `resume` (the one pending interrupt in scope) and `resumeMap` ({ [interruptId]: value }).",
    );
  let target: ResumeTarget | null = null;
  if (fields.target) {
    target = {
      ...fields.target,
      ...(fields.expectedCheckpointId !== undefined
        ? { expectedCheckpointId: fields.expectedCheckpointId }
        : {}),
    };
  } else if (fields.expectedCheckpointId !== undefined) {
    await assertHead(ctx.store, threadId, fields.expectedCheckpointId, head?.headCheckpointId);
  }
  return {
    kind: "resume",
    command: buildCommand(fields, hasResume, answerPrincipal(principal), requestId),
    target,
  };
}

/**
 * Starts a run of a thread on this process. Given the thread with its head (`ThreadHead`, read
 * by the caller), a resume or a continue takes the head's run from it; given the thread alone,
 * it reads the head here.
 *
 * @throws ThreadBusyError for new input while another run holds the thread.
 */
export async function launch(
  ctx: ServerContext,
  principal: Principal,
  of: ThreadRecord | ThreadHead,
  work: RunWork,
  options: LaunchOptions = {},
): Promise<ActiveRun> {
  const thread = "thread" in of ? of.thread : of;
  let graph = await ctx.registry.forThread(ctx.store, thread);
  const threadId = thread.threadId;
  let runId: string;
  const fork = work.kind === "input" && options.checkpointId !== undefined;
  if (work.kind === "input" && (work.input !== null || fork)) {
    if (work.input !== null) assertChannels(graph, work.input);
    // New input never waits behind a running run: it is refused at once, with the latest
    // metadata. A repeat of a request does wait: the run holding the thread may be its first
    // attempt, whose outcome it returns (core serializes the two on the lease).
    if (!work.repeat && (await ctx.store.getLease(threadId)))
      throw new ThreadBusyError(threadId, null);
    // Nor does it pass runs accepted before it and still queued: they hold their place in line
    // (after the check, a run queued later is behind this one, as `enqueue` promises).
    if (!work.repeat) {
      const queued = (await ctx.store.listRuns(threadId)).find(isQueuedRoot);
      if (queued) throw new ThreadBusyError(threadId, `queued run ${queued.runId}`);
      // The checks above race with other starts: two that both found the thread idle must not
      // run one after the other. The run takes the lease without waiting, so the one that does
      // not get it is refused like any start on a busy thread.
      graph = withoutLeaseWait(graph);
    }
    // With an Idempotency-Key the run id comes from it, so a repeat finds the first run.
    runId = work.requestId === undefined ? randomUUID() : requestRunIdFor(threadId, work.requestId);
    // A repeat racing its first attempt lets that attempt take the thread first (it takes the
    // lease without waiting, and would be refused if the repeat had it); the repeat then waits
    // its turn on the lease and gets the first attempt's outcome from the store.
    if (work.repeat) await firstAttempt(ctx.store, runIdOf(runId), true);
  } else {
    // A resume or a continue runs the head's run: its id names the run's hub.
    const headRunId =
      "thread" in of
        ? of.runId
        : ((await ctx.store.getCheckpoint(threadId, ROOT_STREAM))?.runId ?? null);
    runId = headRunId ?? randomUUID();
    if (headRunId === null && work.kind === "input") work = { kind: "input", input: {} };
  }
  const active = ctx.runs.start(
    graph,
    work,
    runId,
    {
      threadId,
      actor: principal.subject,
      tenant: thread.tenant,
      runId,
      ...(options.interruptBefore ? { interruptBefore: options.interruptBefore } : {}),
      ...(options.interruptAfter ? { interruptAfter: options.interruptAfter } : {}),
      ...(options.onPending ? { onPending: options.onPending } : {}),
      ...(fork ? { checkpointId: options.checkpointId } : {}),
      ...(work.kind === "input" && work.requestId !== undefined
        ? { requestId: work.requestId }
        : {}),
    },
    options.streamMessages === true ? WITH_MESSAGES : ALL_MODES,
  );
  // If this process dies mid-run, the background sweep of a live one takes the run over once
  // its lease expires (see background.ts).
  return active;
}
