/**
 * A compiled, runnable graph: `invoke`, `stream`, `resume`, `resumeTargeted`, `steer`, state and
 * history, and the interrupt queue.
 */
import { randomUUID } from "node:crypto";
import type { Schema, StateOf, UpdateOf } from "../channels.ts";
import { MemorySaver } from "../checkpoint/memory.ts";
import type { Checkpointer, InterruptQuery, RunRecord } from "../checkpoint/types.ts";
import {
  InvalidInputError,
  MissingCheckpointerError,
  MissingThreadIdError,
  NotFoundError,
  ThreadBusyError,
} from "../errors.ts";
import { validateThreadId, type CheckpointId, type RunId, type ThreadId } from "../ids.ts";
import { isResumeCommand, type ResumeCommand } from "../graph/command.ts";
import { assertStorable } from "../serde.ts";
import type { GraphShape } from "../graph/state-graph.ts";
import type { RunResult, SteeringRecord } from "../types.ts";
import { currentTask } from "./context.ts";
import {
  EventQueue,
  silentSink,
  type EventSink,
  type StreamEvent,
  type StreamMode,
} from "./events.ts";
import type { DeterminismMode } from "./execution.ts";
import { defaultLease, withLease, type HeldLease, type LeaseSettings } from "./lease.ts";
import type { RunSelectors } from "./loop.ts";
import { staleError, tasksToWake, type ResumeTarget } from "./resume.ts";
import type { GraphRuntime } from "./run.ts";
import { parseSelectors } from "./selectors.ts";
import {
  listInterruptsForPeople,
  type InterruptListItem,
  type InterruptListQuery,
} from "./queue.ts";
import { getState, getStateHistory, updateState, type StateSnapshot } from "./state.ts";
import { recordSteering, resumeWith } from "./answer-run.ts";
import { runRoot } from "./root-run.ts";
import { runChild } from "./child.ts";
import { defaultGraphName } from "./graph-name.ts";
import { staticPauseCommand } from "./static-continue.ts";

/** Options of `StateGraph.compile`. */
export interface CompileOptions {
  /** Where runs are stored. Required for interrupts, resume, state and history. */
  checkpointer?: Checkpointer;
  /** Pause before these nodes (names, or subgraph paths like `"supervisor/*\/tools"`). */
  interruptBefore?: string[];
  /** Pause after these nodes. */
  interruptAfter?: string[];
  /**
   * Graph name: the sub-agent id is this name plus the child run id; interrupts, runs and deadline
   * timers are scoped by it. Default: `graph-<hash of the definition>` (see docs/interrupts.md).
   */
  name?: string;
  /** Determinism guard on re-run interrupt payloads. Default `"strict"`. */
  determinism?: DeterminismMode;
  /** Maximum supersteps per call. Default 100. */
  recursionLimit?: number;
  /** Lease timing for per-thread serialization across processes. */
  lease?: Partial<LeaseSettings>;
}

/** Options of one call. */
export interface RunOptions {
  threadId?: string;
  /** Run from this past checkpoint: a fork (a new run from that state). */
  checkpointId?: string;
  /** Per-run static interrupts; they hold for the whole run, across resumes. */
  interruptBefore?: string[];
  interruptAfter?: string[];
  signal?: AbortSignal;
  /** Plain input to a thread with pending interrupts: `"error"` (default) or `"cancel"` them. */
  onPending?: "error" | "cancel";
  /** Who acts (recorded in the audit log). */
  actor?: string;
  /** Tenant of a new thread. */
  tenant?: string | null;
  /** Metadata of a new thread. */
  metadata?: Record<string, unknown>;
  /**
   * Makes the call safe to retry (an HTTP `Idempotency-Key`): a call with a request id that was
   * made before returns the first call's result, also while that call is still running (the
   * retry waits for the thread's lease, then finds the stored result), and a retry after a crash
   * continues the run the first attempt started — same task ids, same idempotency keys — instead
   * of starting a second one. Request ids are global to the store: make them unique per call.
   */
  requestId?: string;
}

/** Options of `stream`. */
export interface StreamOptions extends RunOptions {
  /** Modes to receive; default `["values"]`. `interrupt` and `end` events always come. */
  streamMode?: StreamMode | StreamMode[];
}

/** Helpers to build call options. */
export const RunConfig = {
  /** Options addressing a thread: `RunConfig.thread("support-123")`. */
  thread(threadId: string, extra: Omit<RunOptions, "threadId"> = {}): RunOptions {
    return { ...extra, threadId };
  },
};

/** A graph ready to run. Build one with `new StateGraph(schema)...compile()`. */
export class CompiledGraph<S extends Schema> {
  /** The graph's name (sub-agent ids are this name plus a child run id). */
  readonly name: string;
  readonly checkpointer: Checkpointer | undefined;
  readonly determinism: DeterminismMode;
  /** @internal */
  readonly runtime: GraphRuntime;
  /** @internal */
  readonly compileOptions: CompileOptions;
  private readonly lease: LeaseSettings;

  /** @internal Use `StateGraph.compile()`. */
  constructor(shape: GraphShape, options: CompileOptions) {
    this.name = options.name ?? defaultGraphName(shape);
    this.checkpointer = options.checkpointer;
    this.determinism = options.determinism ?? "strict";
    this.compileOptions = options;
    this.runtime = { shape, name: this.name, recursionLimit: options.recursionLimit ?? 100 };
    this.lease = { ...defaultLease, ...options.lease };
  }

  /**
   * Runs the graph to its end or its first pause. Input is a state update, `null` to continue a
   * thread, or a resume command.
   *
   * @example
   * const r = await graph.invoke({ request: "refund" }, { threadId: "t1" });
   * if (r.status === "interrupted") await graph.resume(RunConfig.thread("t1"), Command.resume(true));
   * @throws MissingThreadIdError when the graph has a checkpointer and no thread id is given.
   * @throws ThreadInterruptedError for plain input to a thread with pending interrupts.
   */
  async invoke(
    input: UpdateOf<S> | ResumeCommand | null,
    options: RunOptions = {},
  ): Promise<RunResult<StateOf<S>>> {
    const task = currentTask();
    if (task && options.threadId === undefined && !isResumeCommand(input)) {
      // Invoked from node code: a child run of the calling task.
      return (await runChild(this, input ?? {}, task, this.name)) as RunResult<StateOf<S>>;
    }
    return this.fromCaller(input, options, silentSink);
  }

  /**
   * Runs like `invoke` and yields events as they happen; the last event is `end` with the result.
   */
  stream(
    input: UpdateOf<S> | ResumeCommand | null,
    options: StreamOptions = {},
  ): AsyncIterable<StreamEvent> {
    const modes = new Set<StreamMode>(
      Array.isArray(options.streamMode) ? options.streamMode : [options.streamMode ?? "values"],
    );
    const queue = new EventQueue(modes);
    this.fromCaller(input, options, queue).then(
      (result) => {
        queue.push({ type: "end", namespace: [], result });
        queue.close();
      },
      (error: unknown) => queue.close(error),
    );
    return queue;
  }

  /** Answers pending interrupts of a thread and continues the run. Same as `invoke(command, config)`. */
  resume(config: RunOptions, command: ResumeCommand): Promise<RunResult<StateOf<S>>> {
    return this.execute(command, config, silentSink);
  }

  /**
   * Answers the pending interrupts a target selects — the orchestrator run, one child run, one
   * task, one namespace or one interrupt — and continues. Paused siblings do not run.
   *
   * @throws StaleTargetError when the target is no longer current (with the latest metadata).
   * @throws NoMatchingTargetError / AmbiguousResumeError when the target selects none / several.
   */
  async resumeTargeted(
    target: ResumeTarget,
    command: ResumeCommand,
    options: Omit<RunOptions, "threadId"> = {},
  ): Promise<RunResult<StateOf<S>>> {
    const saver = this.requireSaver();
    const run = await saver.getRun(target.runId as RunId);
    if (!run) throw new NotFoundError("run", target.runId);
    return this.answerAndContinue(
      run.threadId,
      command,
      target,
      { ...options, threadId: run.threadId },
      silentSink,
    );
  }

  /**
   * Records a steering instruction for a run, task or interrupt without resuming. Node code of
   * the next execution in that scope reads it through `ctx.steering`.
   */
  async steer(
    target: ResumeTarget,
    text: string,
    options: { actor?: string } = {},
  ): Promise<SteeringRecord> {
    const saver = this.requireSaver();
    const run = await saver.getRun(target.runId as RunId);
    if (!run) throw new NotFoundError("run", target.runId);
    if (run.status === "done" || run.status === "cancelled" || run.status === "error")
      throw await staleError(
        saver,
        run.threadId,
        run.runId,
        `Run ${run.runId} is ${run.status}; there is no next execution to steer.`,
      );
    return recordSteering(
      this.requireSaver(),
      run.threadId,
      target,
      text,
      options.actor ?? "anonymous",
    );
  }

  /** The current state of a thread: values, next tasks, pending interrupts, checkpoint. */
  getState(
    config: RunOptions,
    options: { subgraphs?: boolean } = {},
  ): Promise<StateSnapshot<StateOf<S>>> {
    return getState(
      this.runtime,
      this.requireSaver(),
      this.requireThread(config),
      config.checkpointId,
      options.subgraphs ?? false,
    ) as Promise<StateSnapshot<StateOf<S>>>;
  }

  /** Checkpoints of a thread, newest first. */
  getStateHistory(
    config: RunOptions,
    options: { limit?: number; before?: string } = {},
  ): Promise<StateSnapshot<StateOf<S>>[]> {
    return getStateHistory(
      this.runtime,
      this.requireSaver(),
      this.requireThread(config),
      options,
    ) as Promise<StateSnapshot<StateOf<S>>[]>;
  }

  /**
   * Writes values as if node `asNode` had returned them: a new checkpoint (a fork when
   * `config.checkpointId` is not the head). Its edges decide the next tasks.
   */
  updateState(
    config: RunOptions,
    values: UpdateOf<S>,
    options: { asNode?: string } = {},
  ): Promise<{ checkpointId: CheckpointId }> {
    return updateState(
      this.runtime,
      this.requireSaver(),
      this.requireThread(config),
      values,
      config.checkpointId,
      options.asNode,
      config.actor ?? "anonymous",
    );
  }

  /** Pending (or other) interrupts across threads, newest first, for people to act on. */
  listInterrupts(
    query: InterruptListQuery = {},
  ): Promise<{ items: InterruptListItem[]; nextCursor: string | null }> {
    return listInterruptsForPeople(this.requireSaver(), query as InterruptQuery);
  }

  /**
   * Resolves every pending interrupt past its deadline (answer with `onTimeout`'s value or cancel
   * its task) and continues the affected threads. Returns how many it resolved. Call it at start
   * and periodically ({@link CompiledGraph.startDeadlineTimer} does).
   */
  async resolveExpiredInterrupts(now: Date = new Date()): Promise<number> {
    const saver = this.requireSaver();
    const expired = await saver.listExpiredInterrupts(now.toISOString(), 500);
    const byThread = new Map<ThreadId, typeof expired>();
    for (const record of expired) {
      // A store may hold threads of several graphs: continue only those this graph owns.
      if ((record.path[0]?.graph ?? record.graph) !== this.name) continue;
      byThread.set(record.threadId, [...(byThread.get(record.threadId) ?? []), record]);
    }
    let resolved = 0;
    for (const [threadId, records] of byThread) {
      // Answer and continue under the thread's lease, like a person's answer.
      await withLease(saver, threadId, this.lease, async (lease) => {
        let answered = 0;
        for (const record of records) {
          const onTimeout = record.onTimeout ?? { kind: "cancel" };
          const outcome = await lease.store.answerInterrupts({
            threadId,
            answers:
              onTimeout.kind === "value" ? [{ id: record.id, value: onTimeout.value ?? null }] : [],
            cancel: onTimeout.kind === "cancel" ? [record.id] : [],
            wake: await tasksToWake(lease.store, [record]),
            actor: "system:timer",
            action: "timeout",
          });
          if (outcome.ok) answered += 1;
        }
        resolved += answered;
        if (answered > 0)
          await this.continueUnderLease(lease, { threadId, actor: "system:timer" }, silentSink);
      });
    }
    return resolved;
  }

  /**
   * Finds this graph's root runs that a crashed or cut-off process left `running` — a run that
   * was executing, or an answer recorded but not yet continued — and continues each from its last
   * checkpoint (`action: "continue"`, the default) or marks it failed (`"fail"`). A run whose
   * lease is still held (its process is alive and renewing) is left alone. Nothing committed is
   * lost and no finished task runs again; a task that was mid-flight runs again with the same
   * task id and idempotency keys. Call it at start and periodically, as with deadlines.
   *
   * @returns the run ids continued (or failed) and those skipped because their thread was busy.
   */
  async recoverRuns(
    options: { action?: "continue" | "fail"; limit?: number } = {},
  ): Promise<{ recovered: RunId[]; busy: RunId[] }> {
    const saver = this.requireSaver();
    const recovered: RunId[] = [];
    const busy: RunId[] = [];
    let cursor: string | null = null;
    let seen = 0;
    do {
      const page = await saver.listRunsByStatus({ status: "running", rootOnly: true, cursor });
      cursor = page.nextCursor;
      for (const run of page.items) {
        if (run.graph !== this.name) continue;
        if (++seen > (options.limit ?? 1000)) return { recovered, busy };
        try {
          // No waiting: a held lease means a live process is running it.
          await withLease(saver, run.threadId, { ...this.lease, waitMs: 0 }, async (lease) => {
            const current = await lease.store.getRun(run.runId);
            if (current?.status !== "running") return;
            if (options.action === "fail")
              await lease.store.putRun({
                ...current,
                status: "error",
                updatedAt: new Date().toISOString(),
                error: {
                  name: "RecoveredRunError",
                  message: "The process running this run stopped; the recovery sweep failed it.",
                },
              });
            else
              await this.continueUnderLease(
                lease,
                { threadId: run.threadId, actor: "system:recovery" },
                silentSink,
              );
            recovered.push(run.runId);
          });
        } catch (error) {
          if (!(error instanceof ThreadBusyError)) throw error;
          busy.push(run.runId);
        }
      }
    } while (cursor);
    return { recovered, busy };
  }

  /**
   * Resolves expired interrupts now and then every `intervalMs` (default 1 s) until stopped, so
   * deadlines hold even for interrupts that expired while no process ran. The timer does not
   * keep the process alive.
   */
  startDeadlineTimer(options: { intervalMs?: number; onError?: (error: unknown) => void } = {}): {
    stop(): void;
    ready: Promise<number>;
  } {
    let running: Promise<unknown> = Promise.resolve();
    const tick = (): Promise<number> => {
      const next = running.then(() => this.resolveExpiredInterrupts());
      running = next.catch((error: unknown) => options.onError?.(error));
      return next;
    };
    const ready = tick();
    const timer = setInterval(() => void tick().catch(() => undefined), options.intervalMs ?? 1000);
    timer.unref();
    return { stop: () => clearInterval(timer), ready };
  }

  // -------------------------------------------------------------------------------------------

  private requireSaver(): Checkpointer {
    if (!this.checkpointer) throw new MissingCheckpointerError();
    return this.checkpointer;
  }

  private requireThread(config: RunOptions): ThreadId {
    if (!config.threadId) throw new MissingThreadIdError();
    return validateThreadId(config.threadId);
  }

  /** @internal Selectors for a run: compile-time ones plus the run's own. */
  selectorsFor(run: RunRecord | null, base: number): RunSelectors {
    return {
      before: [
        ...parseSelectors(this.compileOptions.interruptBefore, base),
        ...parseSelectors(run?.options?.interruptBefore, 0),
      ],
      after: [
        ...parseSelectors(this.compileOptions.interruptAfter, base),
        ...parseSelectors(run?.options?.interruptAfter, 0),
      ],
    };
  }

  /** A caller's call: `null` at a pause held only by static selectors continues it. */
  private fromCaller(
    input: UpdateOf<S> | ResumeCommand | null,
    options: RunOptions,
    sink: EventSink,
  ): Promise<RunResult<StateOf<S>>> {
    if (input === null && this.checkpointer && options.threadId) {
      const threadId = validateThreadId(options.threadId);
      return staticPauseCommand(this.checkpointer, threadId, {
        actor: options.actor,
        requestId: options.requestId,
      }).then((proceed) =>
        proceed
          ? this.answerAndContinue(threadId, proceed, null, options, sink)
          : this.execute(null, options, sink),
      );
    }
    return this.execute(input, options, sink);
  }

  /** Answers a resume command and continues the run, both under the thread's lease. */
  private answerAndContinue(
    threadId: ThreadId,
    command: ResumeCommand,
    target: ResumeTarget | null,
    options: RunOptions,
    sink: EventSink,
  ): Promise<RunResult<StateOf<S>>> {
    return withLease(this.requireSaver(), threadId, this.lease, (lease) =>
      resumeWith(
        this,
        lease.store,
        (o, k) => this.continueUnderLease(lease, o, k),
        threadId,
        command,
        target,
        options,
        sink,
      ),
    );
  }

  /** Continues the thread's run from its head, under a lease the caller holds. */
  private continueUnderLease(
    lease: HeldLease,
    options: RunOptions,
    sink: EventSink,
  ): Promise<RunResult<StateOf<S>>> {
    return runRoot(this, lease.store, true, lease.fence.threadId, null, options, sink, lease);
  }

  private execute(
    input: UpdateOf<S> | ResumeCommand | null,
    options: RunOptions,
    sink: EventSink,
  ): Promise<RunResult<StateOf<S>>> {
    if (isResumeCommand(input)) {
      this.requireSaver();
      return this.answerAndContinue(this.requireThread(options), input, null, options, sink);
    }
    if (
      input !== null &&
      input !== undefined &&
      (typeof input !== "object" || Array.isArray(input))
    )
      throw new InvalidInputError(
        "Input must be an object of channel updates, null (continue), or Command.resume(...).",
      );
    const durable = this.checkpointer !== undefined;
    if (durable && !options.threadId) throw new MissingThreadIdError();
    const saver = this.checkpointer ?? new MemorySaver();
    // Refused before the run is recorded, so a bad input never leaves a run `running`.
    if (input) assertStorable(saver.serializer, input, "input");
    const threadId =
      options.threadId === undefined
        ? (`ephemeral-${randomUUID()}` as ThreadId)
        : validateThreadId(options.threadId);
    if (!this.checkpointer) return runRoot(this, saver, false, threadId, input, options, sink);
    return withLease(this.checkpointer, threadId, this.lease, (lease) =>
      runRoot(this, lease.store, true, threadId, input, options, sink, lease),
    );
  }
}
