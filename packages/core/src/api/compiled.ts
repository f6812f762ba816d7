/**
 * A compiled, runnable graph: `invoke`, `stream`, `resume`, `resumeTargeted`, `steer`, state and
 * history, the interrupt queue, deadlines and recovery. A thin facade: it builds the graph's
 * {@link GraphDefinition} once, and each call opens a {@link ThreadSession} on the thread, answers
 * (operations/answer.ts), then continues the run (engine/) in that session.
 */
import { randomUUID } from "node:crypto";
import type { Schema, StateOf, UpdateOf } from "../channels.ts";
import { MemorySaver } from "../checkpoint/memory.ts";
import type { RuntimeStore, InterruptQuery, LeaseReads } from "../checkpoint/types.ts";
import { runChild, subgraphNode } from "../engine/child.ts";
import { currentTask } from "../engine/context.ts";
import { EventQueue, silentSink, type EventSink, type StreamEvent } from "../engine/events.ts";
import { runRoot } from "../engine/root.ts";
import {
  InvalidGraphError,
  InvalidInputError,
  MissingCheckpointerError,
  MissingThreadIdError,
  NotFoundError,
} from "../errors.ts";
import {
  asInterruptId,
  asRunId,
  validateThreadId,
  type CheckpointId,
  type RunId,
  type ThreadId,
} from "../ids.ts";
import {
  resolveExpiredInterrupts,
  startDeadlineTimer,
  type DeadlineTimer,
} from "../operations/deadlines.ts";
import { checkSelectors, parseSelectors, staticPauseCommand } from "../interrupts/static.ts";
import { encodeEphemeralThreadId } from "../keys.ts";
import { applyCommand } from "../operations/answer.ts";
import type { ResumeTarget } from "../graph/command.ts";
import { assertStorable } from "../serde.ts";
import { defaultLease } from "../thread/lease.ts";
import {
  listInterruptsForPeople,
  type InterruptListPage,
  type InterruptListQuery,
} from "../operations/queue.ts";
import { recoverRuns, type RecoverOptions } from "../operations/recovery.ts";
import { openSession, ThreadSession } from "../thread/session.ts";
import { getState, getStateHistory, updateState, type StateSnapshot } from "../operations/state.ts";
import { checkSteeringTarget, recordSteering } from "../operations/steering.ts";
import type { RunResult, SteeringRecord } from "../types.ts";
import { isResumeCommand, type ResumeCommand } from "../graph/command.ts";
import type {
  DeterminismMode,
  DraftGraph,
  GraphDefinition,
  NodeSpec,
} from "../graph/definition.ts";
import { defaultGraphName } from "../graph/graph-name.ts";
import {
  ANONYMOUS_ACTOR,
  type CompileOptions,
  type LeaseSettings,
  type RunOptions,
  type StreamMode,
  type StreamOptions,
} from "../graph/options.ts";
import type { ApproversSpec } from "../graph/node.ts";

/**
 * The events of a call as they happen, in the modes `options` asks for, then `end` with its
 * result (or the call's error ending the iteration).
 */
function streamOf(
  options: StreamOptions,
  call: (sink: EventSink) => Promise<RunResult>,
): AsyncIterable<StreamEvent> {
  const modes = new Set<StreamMode>(
    Array.isArray(options.streamMode) ? options.streamMode : [options.streamMode ?? "values"],
  );
  const queue = new EventQueue(modes);
  call(queue).then(
    (result) => {
      queue.push({ type: "end", namespace: [], result });
      queue.close();
    },
    (error: unknown) => queue.close(error),
  );
  return queue;
}

/** A graph ready to run. Build one with `new StateGraph(schema)...compile()`. */
export class CompiledGraph<S extends Schema> {
  /** The graph's name (sub-agent ids are this name plus a child run id). */
  readonly name: string;
  readonly checkpointer: RuntimeStore | undefined;
  readonly determinism: DeterminismMode;
  /** @internal The plain-data definition every call runs. */
  readonly definition: GraphDefinition;
  private readonly lease: LeaseSettings;

  /** @internal Use `StateGraph.compile()`. */
  constructor(draft: DraftGraph | GraphDefinition, options: CompileOptions) {
    this.definition = "nodes" in draft && "name" in draft ? draft : buildDefinition(draft, options);
    this.name = this.definition.name;
    this.checkpointer = options.checkpointer;
    this.determinism = this.definition.determinism;
    this.lease = { ...defaultLease, ...options.lease };
  }

  /** The lease timing this graph's calls use. */
  get leaseSettings(): Readonly<LeaseSettings> {
    return this.lease;
  }

  /**
   * The same graph (same definition, same store) with other lease timing: how a deployment sets
   * one lease for every graph it serves (the server's `REIN_LEASE_TTL_MS`) without recompiling
   * the graphs its users wrote.
   */
  withLease(lease: Partial<LeaseSettings>): CompiledGraph<S> {
    return new CompiledGraph<S>(this.definition, {
      ...(this.checkpointer ? { checkpointer: this.checkpointer } : {}),
      lease: { ...this.lease, ...lease },
    });
  }

  /**
   * Whether the graph was compiled without `name`, so its name is `graph-<hash>` of its
   * definition (a host that knows the graph by a key of its own may name it by that key).
   */
  get hasDefaultName(): boolean {
    return this.name === defaultGraphName(this.definition);
  }

  /**
   * The same graph (same definition, store and lease) under another name: runs, interrupts and
   * deadline timers are scoped by it. The server names a graph compiled without `name` by its
   * registry key, so the queue and the console show that key instead of `graph-<hash>`.
   */
  withName(name: string): CompiledGraph<S> {
    return new CompiledGraph<S>(
      { ...this.definition, name },
      {
        ...(this.checkpointer ? { checkpointer: this.checkpointer } : {}),
        lease: this.lease,
      },
    );
  }

  /**
   * The same graph with default approvers: questions its runs raise without `approvers` of their
   * own get this policy (a deployment's per-graph default, such as the server's `--policies`).
   *
   * @example graph.withApprovers({ when: { path: "amount", gt: 1000 }, then: { groups: ["finance"], count: 2 } })
   */
  withApprovers(approvers: ApproversSpec | undefined): CompiledGraph<S> {
    return new CompiledGraph<S>(
      { ...this.definition, approvers },
      {
        ...(this.checkpointer ? { checkpointer: this.checkpointer } : {}),
        lease: this.lease,
      },
    );
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
   * @throws InvalidInputError for an `interruptBefore` / `interruptAfter` selector that names no
   *   node (the error lists the nodes of the graph it reached).
   */
  async invoke(
    input: UpdateOf<S> | ResumeCommand | null,
    options: RunOptions = {},
  ): Promise<RunResult<StateOf<S>>> {
    const task = currentTask();
    if (task && options.threadId === undefined && !isResumeCommand(input)) {
      // Invoked from node code: a child run of the calling task.
      return (await runChild(this.definition, input ?? {}, task)) as RunResult<StateOf<S>>;
    }
    return this.call(input, options, silentSink);
  }

  /**
   * Runs like `invoke` and yields events as they happen; the last event is `end` with the result.
   */
  stream(
    input: UpdateOf<S> | ResumeCommand | null,
    options: StreamOptions = {},
  ): AsyncIterable<StreamEvent> {
    return streamOf(options, (sink) => this.call(input, options, sink));
  }

  /** Answers pending interrupts of a thread and continues the run. Same as `invoke(command, config)`. */
  resume(config: RunOptions, command: ResumeCommand): Promise<RunResult<StateOf<S>>> {
    return this.call(command, config, silentSink);
  }

  /**
   * Answers the pending interrupts a target selects — the orchestrator run, one child run, one
   * task, one namespace or one interrupt — and continues. Paused siblings do not run.
   *
   * A caller that knows the run's thread passes it as `options.threadId`: the run is then read
   * and checked to be that thread's under the thread's lease, instead of read before taking it
   * (one round trip fewer on a networked store).
   *
   * @throws StaleTargetError when the target is no longer current (with the latest metadata).
   * @throws NoMatchingTargetError / AmbiguousResumeError when the target selects none / several.
   * @throws NotFoundError when the run does not exist (or is not of `options.threadId`).
   */
  resumeTargeted(
    target: ResumeTarget,
    command: ResumeCommand,
    options: RunOptions = {},
  ): Promise<RunResult<StateOf<S>>> {
    return this.targeted(target, command, options, silentSink);
  }

  /**
   * Runs like `resumeTargeted` and yields the continued run's events as they happen (the answered
   * task's, a sub-agent's under its namespace); the last event is `end` with the result. A refusal
   * (a stale target...) ends the iteration with the error before any event.
   */
  streamTargeted(
    target: ResumeTarget,
    command: ResumeCommand,
    options: StreamOptions = {},
  ): AsyncIterable<StreamEvent> {
    return streamOf(options, (sink) => this.targeted(target, command, options, sink));
  }

  private async targeted(
    target: ResumeTarget,
    command: ResumeCommand,
    options: RunOptions,
    sink: EventSink,
  ): Promise<RunResult<StateOf<S>>> {
    this.checkSelectors(options);
    let threadId = options.threadId;
    if (threadId === undefined) {
      const run = await this.requireStore().getRun(asRunId(target.runId));
      if (!run) throw new NotFoundError("run", target.runId);
      threadId = run.threadId;
    }
    return this.answer(validateThreadId(threadId), command, target, { ...options, threadId }, sink);
  }

  /**
   * Records a steering instruction for a run, task or interrupt without resuming. Node code of
   * the next execution in that scope reads it through `ctx.steering`.
   *
   * @throws StaleTargetError when the run has finished, or the target names an interrupt or task
   *   with no pending interrupt (answered, cancelled, superseded); nothing is recorded.
   * @throws NoMatchingTargetError when it names an interrupt or task its run never asked.
   */
  async steer(
    target: ResumeTarget,
    text: string,
    options: { actor?: string } = {},
  ): Promise<SteeringRecord> {
    const store = this.requireStore();
    const run = await store.getRun(asRunId(target.runId));
    if (!run) throw new NotFoundError("run", target.runId);
    const session = new ThreadSession({
      store,
      threadId: run.threadId,
      actor: options.actor ?? ANONYMOUS_ACTOR,
    });
    await checkSteeringTarget(session, run, target);
    return recordSteering(session, target, text);
  }

  /**
   * Refuses per-call `interruptBefore` / `interruptAfter` selectors that name no node, as every
   * call does before it stores anything; for a host that accepts a run now and starts it later
   * (a queue), so the caller hears of a typo at once.
   *
   * @throws InvalidInputError naming the selector, the graph it reached and that graph's nodes.
   */
  checkSelectors(options: Pick<RunOptions, "interruptBefore" | "interruptAfter">): void {
    checkRunSelectors(this.definition, options, refuseInput);
  }

  /** The current state of a thread: values, next tasks, pending interrupts, checkpoint. */
  getState(
    config: RunOptions,
    options: { subgraphs?: boolean } = {},
  ): Promise<StateSnapshot<StateOf<S>>> {
    return getState(
      this.definition,
      this.readSession(config),
      config.checkpointId,
      options.subgraphs ?? false,
    ) as Promise<StateSnapshot<StateOf<S>>>;
  }

  /**
   * Checkpoints of a thread, newest first; `before` (a checkpoint id of the previous page) pages
   * back.
   *
   * @throws InvalidInputError when `before` is not a checkpoint of the thread.
   */
  getStateHistory(
    config: RunOptions,
    options: { limit?: number; before?: string } = {},
  ): Promise<StateSnapshot<StateOf<S>>[]> {
    return getStateHistory(this.definition, this.readSession(config), options) as Promise<
      StateSnapshot<StateOf<S>>[]
    >;
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
      this.definition,
      this.readSession(config),
      values,
      config.checkpointId,
      options.asNode,
    );
  }

  /** Pending (or other) interrupts across threads, newest first, for people to act on. */
  listInterrupts(query: InterruptListQuery = {}): Promise<InterruptListPage> {
    return listInterruptsForPeople(this.requireStore(), query as InterruptQuery);
  }

  /**
   * Resolves every pending interrupt past its deadline (answer with `onTimeout`'s value or cancel
   * its task) and continues the affected threads. Returns how many it resolved. Call it at start
   * and periodically ({@link CompiledGraph.startDeadlineTimer} does).
   */
  resolveExpiredInterrupts(now: Date = new Date()): Promise<number> {
    return resolveExpiredInterrupts(this.definition, this.requireStore(), this.lease, now);
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
  recoverRuns(options: RecoverOptions = {}): Promise<{ recovered: RunId[]; busy: RunId[] }> {
    return recoverRuns(this.definition, this.requireStore(), this.lease, options);
  }

  /**
   * Resolves expired interrupts now and then every `intervalMs` (default 1 s) until stopped, so
   * deadlines hold even for interrupts that expired while no process ran. The timer does not
   * keep the process alive.
   */
  startDeadlineTimer(
    options: { intervalMs?: number; onError?: (error: unknown) => void } = {},
  ): DeadlineTimer {
    return startDeadlineTimer(() => this.resolveExpiredInterrupts(), options);
  }

  // -------------------------------------------------------------------------------------------

  private requireStore(): RuntimeStore {
    if (!this.checkpointer) throw new MissingCheckpointerError();
    return this.checkpointer;
  }

  private requireThread(config: RunOptions): ThreadId {
    if (!config.threadId) throw new MissingThreadIdError();
    return validateThreadId(config.threadId);
  }

  /** A session for reads and edits outside a run (no lease, as before the first call). */
  private readSession(config: RunOptions): ThreadSession {
    const store = this.requireStore();
    return new ThreadSession({
      store,
      threadId: this.requireThread(config),
      actor: config.actor ?? ANONYMOUS_ACTOR,
    });
  }

  /**
   * A caller's call. Resume commands answer then continue; `null` at a pause held only by static
   * selectors answers them and continues; other input starts or continues the thread's run.
   * Refusals of bad input throw before anything is stored (synchronously, for `stream`).
   */
  private call(
    input: UpdateOf<S> | ResumeCommand | null,
    options: RunOptions,
    sink: EventSink,
  ): Promise<RunResult<StateOf<S>>> {
    this.checkSelectors(options);
    if (isResumeCommand(input)) {
      this.requireStore();
      return this.answer(this.requireThread(options), input, null, options, sink);
    }
    if (
      input !== null &&
      input !== undefined &&
      (typeof input !== "object" || Array.isArray(input))
    )
      throw new InvalidInputError(
        "Input must be an object of channel updates, null (continue), or Command.resume(...).",
      );
    const store = this.checkpointer;
    if (!store) return this.runEphemeral(input, options, sink);
    if (!options.threadId) throw new MissingThreadIdError();
    // Refused before the run is recorded, so a bad input never leaves a run `running`.
    if (input) assertStorable(store.serializer, input, "input");
    const threadId = validateThreadId(options.threadId);
    const actor = options.actor ?? ANONYMOUS_ACTOR;
    // The head (and a retried request's outcome) come back with the lease.
    const first = { requestId: options.requestId };
    const run = (): Promise<RunResult<StateOf<S>>> =>
      openSession(
        store,
        threadId,
        this.lease,
        actor,
        (session) => this.continue(session, input, options, sink),
        first,
      );
    if (input !== null && input !== undefined) return run();
    const reads = new ThreadSession({ store, threadId, actor });
    return staticPauseCommand(reads, {
      actor: options.actor,
      requestId: options.requestId,
    }).then((proceed) => (proceed ? this.answer(threadId, proceed, null, options, sink) : run()));
  }

  /** A call of a graph without a checkpointer: a private memory store, nothing durable. */
  private runEphemeral(
    input: UpdateOf<S> | null,
    options: RunOptions,
    sink: EventSink,
  ): Promise<RunResult<StateOf<S>>> {
    const store = new MemorySaver();
    if (input) assertStorable(store.serializer, input, "input");
    const threadId =
      options.threadId === undefined
        ? validateThreadId(encodeEphemeralThreadId(randomUUID()))
        : validateThreadId(options.threadId);
    const session = new ThreadSession({
      store,
      threadId,
      actor: options.actor ?? ANONYMOUS_ACTOR,
      durable: false,
    });
    return this.continue(session, input, options, sink);
  }

  /**
   * Answers a resume command, then continues the run, in one session holding the thread's lease:
   * the answer is recorded (operations/answer.ts), and the continuation runs the woken tasks (engine/).
   */
  private answer(
    threadId: ThreadId,
    command: ResumeCommand,
    target: ResumeTarget | null,
    options: RunOptions,
    sink: EventSink,
  ): Promise<RunResult<StateOf<S>>> {
    const actor = command.options.actor ?? options.actor ?? ANONYMOUS_ACTOR;
    return openSession(
      this.requireStore(),
      threadId,
      this.lease,
      actor,
      async (session) => {
        const applied = await applyCommand(session, command, target, options);
        if (applied.kind === "done") return applied.result as RunResult<StateOf<S>>;
        if (applied.requestId !== undefined) session.keepLeaseAfterRun();
        const continued = this.continue(session, null, applied.options, sink);
        return applied.requestId === undefined
          ? continued
          : session.finishRequest(applied.requestId, continued);
      },
      answerReads(command, target, options),
    );
  }

  /** Starts (with input) or continues (with `null`) the thread's root run in `session`. */
  private continue(
    session: ThreadSession,
    input: UpdateOf<S> | null,
    options: RunOptions,
    sink: EventSink,
  ): Promise<RunResult<StateOf<S>>> {
    return runRoot(this.definition, session, input, options, sink) as Promise<
      RunResult<StateOf<S>>
    >;
  }
}

/**
 * What an answer reads first, asked of the store with the lease (one round trip on a networked
 * store): the request's outcome, and the interrupts the command names — by id, the target run's,
 * or the thread's oldest pending one.
 */
function answerReads(
  command: ResumeCommand,
  target: ResumeTarget | null,
  options: RunOptions,
): Omit<LeaseReads, "known"> {
  const named =
    command.kind === "resumeMap"
      ? Object.keys(command.map)
      : target?.interruptId !== undefined
        ? [target.interruptId]
        : undefined;
  return {
    requestId: command.options.requestId ?? options.requestId,
    interruptIds: named?.map(asInterruptId),
    runId: target ? asRunId(target.runId) : undefined,
    pendingLimit: !target && command.kind === "resume" ? 1 : undefined,
  };
}

/**
 * The definition of a graph: the builder's draft with each subgraph node wrapped into an
 * ordinary node that runs it as a child run, and the compile options fixed.
 */
function buildDefinition(draft: DraftGraph, options: CompileOptions): GraphDefinition {
  const nodes = new Map<string, NodeSpec>();
  for (const [name, node] of draft.nodes)
    nodes.set(
      name,
      typeof node.run === "function"
        ? { name, run: node.run, options: node.options }
        : {
            name,
            run: subgraphNode(node.run.definition),
            options: node.options,
            subgraph: node.run.definition.name,
            child: node.run.definition,
          },
    );
  const shape = { schema: draft.schema, nodes, edges: draft.edges, branches: draft.branches };
  const definition: GraphDefinition = {
    ...shape,
    name: options.name ?? defaultGraphName(shape),
    determinism: options.determinism ?? "strict",
    recursionLimit: options.recursionLimit ?? 100,
    selectors: {
      before: parseSelectors(options.interruptBefore, 0),
      after: parseSelectors(options.interruptAfter, 0),
    },
  };
  checkRunSelectors(
    definition,
    options,
    (message, details) => new InvalidGraphError(message, details),
  );
  return definition;
}

/** Refuses `interruptBefore` / `interruptAfter` selectors that name no node (see checkSelectors). */
function checkRunSelectors(
  definition: GraphDefinition,
  options: Pick<RunOptions, "interruptBefore" | "interruptAfter">,
  refuse: (message: string, details: Record<string, unknown>) => Error,
): void {
  checkSelectors(definition, options.interruptBefore, "interruptBefore", refuse);
  checkSelectors(definition, options.interruptAfter, "interruptAfter", refuse);
}

const refuseInput = (message: string, details: Record<string, unknown>): Error =>
  new InvalidInputError(message, details);
