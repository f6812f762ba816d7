/**
 * Runs executed by this process: foreground (the request waits) and background (202, then the
 * events go to joiners). Every run publishes its events to a {@link RunHub}; shutdown drains the
 * runs still going.
 */
import {
  Command,
  ReinError,
  RunHandedOverError,
  type ApprovalPrincipal,
  type ResumeCommand,
  type ResumeTarget,
  type RunOptions,
  type RunResult,
  type StreamEvent,
  type StreamMode,
} from "@rein/core";
import { StreamModeSchema } from "@rein/wire";
import { RunHub, type HubEvent } from "./hub.ts";
import type { ServedGraph } from "./registry.ts";

/** Every stream mode: a hub keeps all of them and each subscriber picks its own. */
export const ALL_MODES: StreamMode[] = [...StreamModeSchema.options];

/**
 * {@link ALL_MODES} and a model's streamed deltas (`messages`), for runs whose clients render
 * tokens as they come (LangGraph's protocol): one event per delta, so only those runs ask.
 */
export const WITH_MESSAGES: StreamMode[] = [...ALL_MODES, "messages"];

/** What a run does: new input (or `null` to continue), or an answer. */
export type RunWork =
  | {
      kind: "input";
      input: Record<string, unknown> | null;
      /** From `Idempotency-Key`: a repeat returns the first run's outcome instead of a new run. */
      requestId?: string | undefined;
      /** The same request was made before (its key was claimed): wait for its outcome. */
      repeat?: boolean | undefined;
    }
  | { kind: "resume"; command: ResumeCommand; target: ResumeTarget | null };

/** A run this process started. */
export interface ActiveRun {
  hub: RunHub;
  /** Settles when the run has finished (with its result or its failure). */
  result: Promise<RunResult>;
  /**
   * Settles once the run got going: its first event, or its end. Rejects when it failed before
   * that (a stale target, a busy thread), so a background start can still answer with the error.
   */
  started: Promise<void>;
}

/** Hands events and notices to other processes. */
export interface RunMirror {
  event(hub: RunHub, event: HubEvent): void;
  change(threadId: string): void;
  /** Asks the process executing `runId` to stop it at its next step boundary. */
  cancel(runId: string): void;
  /** Tells the other processes that a thread has queued runs. */
  queued(threadId: string): void;
}

/** Called when a thread's pending interrupts may have changed. */
export type ChangeListener = (threadId: string) => void;

/**
 * Told when a run starts executing and when it finishes (metrics). `kind`: `run` (new input),
 * `resume` (an answer) or `continue`; `status`: the result's, `handed_over` when shutdown handed
 * it to another process, or `failed` when the call threw otherwise.
 */
export interface RunObserver {
  started(kind: RunKind): void;
  finished(kind: RunKind, status: RunResult["status"] | "handed_over" | "failed"): void;
}

/** What a run executes, as metrics label it. */
export type RunKind = "run" | "resume" | "continue";

function kindOf(work: RunWork): RunKind {
  if (work.kind === "resume") return "resume";
  return work.input === null ? "continue" : "run";
}

/** Starts runs, keeps their hubs for late joiners, and drains them at shutdown. */
export class RunManager {
  private readonly hubs = new Map<string, RunHub>();
  /**
   * Every hub kept, by attempt: a later attempt of a run replaces its entry in `hubs`, and a
   * follower elsewhere may still ask for the rest of the earlier one.
   */
  private readonly attempts = new Map<string, RunHub>();
  /**
   * Hubs whose run has started. A hub exists from the start attempt on, but an attempt refused
   * before it started (a busy thread: a queued run waits for its turn) finishes its hub with no
   * events; a joiner that followed it would end at once while the run is still queued. Joiners
   * only see started hubs, and wait for the attempt that starts.
   */
  private readonly startedHubs = new WeakSet<RunHub>();
  private readonly active = new Set<Promise<unknown>>();
  private readonly controllers = new Map<string, AbortController>();
  private readonly changeListeners = new Set<ChangeListener>();
  private readonly startListeners = new Map<string, Set<(hub: RunHub) => void>>();
  private readonly observers = new Set<RunObserver>();

  /**
   * @param mirror receives every event of every run and every change notice, to hand them to
   *   other processes (Postgres LISTEN/NOTIFY).
   */
  constructor(
    private readonly mirror: RunMirror | null = null,
    private readonly retainMs = 5 * 60_000,
  ) {}

  /**
   * Reports every run's start and end to `observer` from now on, beside the observers already
   * added (metrics, a protocol layer...), in the order added; returns what removes it.
   */
  observe(observer: RunObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /** The hub of a run of this process once it has started, while it runs and for a while after. */
  hub(runId: string): RunHub | undefined {
    const hub = this.hubs.get(runId);
    return hub && this.startedHubs.has(hub) ? hub : undefined;
  }

  /** Number of runs still executing. */
  get running(): number {
    return this.active.size;
  }

  /** Whether this process is executing `runId` now. */
  executing(runId: string): boolean {
    return this.controllers.has(runId);
  }

  /**
   * Calls `listener` with the run's hub once `runId` got going in this process (its first event;
   * at once if it has a hub here already, other than `skip`): a join of a queued run waits for it
   * this way, and a stream whose attempt here was taken over waits for the next one with `skip`.
   */
  onStart(runId: string, listener: (hub: RunHub) => void, skip?: RunHub): () => void {
    const hub = this.hub(runId);
    if (hub && hub !== skip) {
      listener(hub);
      return () => undefined;
    }
    let set = this.startListeners.get(runId);
    if (!set) this.startListeners.set(runId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.startListeners.delete(runId);
    };
  }

  /**
   * Stops `runId` at its next step boundary if this process executes it (it ends `cancelled`
   * with its checkpoints kept); otherwise asks the other processes to. Returns whether it ran here.
   */
  cancel(runId: string): boolean {
    const controller = this.controllers.get(runId);
    if (controller) {
      controller.abort(new Error("cancelled by a newer run (multitask policy)"));
      return true;
    }
    this.mirror?.cancel(runId);
    return false;
  }

  /**
   * Publishes again, to the other processes, a run's buffered events after `after`, of the
   * attempt the asker follows if this process has it. When the asker counted `after` in an attempt
   * this process does not have, its ids say nothing here: only the latest event of the run's
   * current attempt goes, which tells the asker the attempt changed.
   */
  replay(runId: string, after: number, attempt?: string): void {
    const kept = attempt === undefined ? undefined : this.attempts.get(attempt);
    const hub = kept?.runId === runId ? kept : this.hubs.get(runId);
    if (!hub || !this.mirror) return;
    const mirror = this.mirror;
    const from = attempt !== undefined && attempt !== hub.attempt ? hub.lastId - 1 : after;
    hub.subscribe(from, (event) => {
      if (event) mirror.event(hub, event);
    })();
  }

  /** Subscribes to "this thread's queue may have changed" notices. */
  onChange(listener: ChangeListener): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Tells subscribers here and in other processes that a thread's interrupts may have changed. */
  notifyChange(threadId: string): void {
    this.notifyLocal(threadId);
    this.mirror?.change(threadId);
  }

  /** Tells the other processes that a thread has queued runs. */
  mirrorQueued(threadId: string): void {
    this.mirror?.queued(threadId);
  }

  /** Tells subscribers of this process only (a notice that came from another process). */
  notifyLocal(threadId: string): void {
    for (const listener of this.changeListeners) listener(threadId);
  }

  /**
   * Starts a run. `runId` is the id the run will have (chosen for new input, the head run's for
   * a continue or an answer).
   */
  start(
    graph: ServedGraph,
    work: RunWork,
    runId: string,
    options: RunOptions,
    modes: StreamMode[] = ALL_MODES,
  ): ActiveRun {
    const threadId = options.threadId as string;
    const hub = new RunHub(threadId, runId);
    const mirror = this.mirror;
    if (mirror) hub.onPublish = (h, e) => mirror.event(h, e);
    this.hubs.set(runId, hub);
    this.attempts.set(hub.attempt, hub);
    const controller = new AbortController();
    this.controllers.set(runId, controller);
    let didStart = false;
    let resolveStarted: () => void = () => undefined;
    let failStart: (error: unknown) => void = () => undefined;
    const started = new Promise<void>((resolve, reject) => {
      resolveStarted = resolve;
      failStart = reject;
    });
    const kind = kindOf(work);
    const markStarted = (): void => {
      if (didStart) return;
      didStart = true;
      this.startedHubs.add(hub);
      for (const observer of this.observers) observer.started(kind);
      resolveStarted();
      // Joiners waiting for this run (it was queued) follow it from here.
      const waiting = this.startListeners.get(runId);
      this.startListeners.delete(runId);
      for (const listener of waiting ?? []) listener(hub);
    };
    const signal = options.signal
      ? AbortSignal.any([options.signal, controller.signal])
      : controller.signal;
    const result = this.execute(graph, work, { ...options, signal }, hub, markStarted, modes);
    const settled = result.then(
      (r) => {
        markStarted();
        for (const observer of this.observers) observer.finished(kind, r.status);
        hub.publish("end", { type: "end", namespace: [], result: r });
        return r;
      },
      (error: unknown) => {
        failStart(error);
        // Refused before it started (a busy thread, a stale target): nothing happened, and the
        // run id may still start later (a queued run), here or elsewhere. Its hub goes now.
        if (!didStart) {
          if (this.hubs.get(runId) === hub) this.hubs.delete(runId);
          this.attempts.delete(hub.attempt);
          throw error;
        }
        // A hand-over is no failure: the run goes on elsewhere (an error-rate alert must not
        // fire on every rolling deploy).
        const status = error instanceof RunHandedOverError ? "handed_over" : "failed";
        for (const observer of this.observers) observer.finished(kind, status);
        hub.publish(
          "error",
          ReinError.is(error)
            ? error.toJSON()
            : { error: "internal_error", message: "The run failed unexpectedly.", details: {} },
        );
        throw error;
      },
    );
    const tracked = settled.finally(() => {
      hub.finish();
      this.active.delete(tracked);
      if (this.controllers.get(runId) === controller) this.controllers.delete(runId);
      if (didStart) this.notifyChange(threadId);
      setTimeout(() => {
        this.attempts.delete(hub.attempt);
        if (this.hubs.get(runId) === hub) this.hubs.delete(runId);
      }, this.retainMs).unref();
    });
    this.active.add(tracked.catch(() => undefined));
    // Nobody may await `started` (a foreground run): keep its rejection from going unhandled.
    started.catch(() => undefined);
    return { hub, result: settled, started };
  }

  private async execute(
    graph: ServedGraph,
    work: RunWork,
    options: RunOptions,
    hub: RunHub,
    markStarted: () => void,
    modes: StreamMode[],
  ): Promise<RunResult> {
    // A targeted answer streams the continued run's events (the answered task's, the sub-agent's
    // under its namespace) to the hub, but counts as started only at its end, as callers of a
    // targeted answer have always been told: once the answered task has run.
    const targeted = work.kind === "resume" && work.target !== null;
    const events =
      work.kind === "resume" && work.target
        ? graph.streamTargeted(work.target, work.command, { ...options, streamMode: modes })
        : graph.stream(work.kind === "input" ? work.input : work.command, {
            ...options,
            streamMode: modes,
          });
    let result: RunResult | null = null;
    for await (const event of events) {
      if (!targeted) markStarted();
      if (event.type === "end") result = event.result;
      else this.forward(hub, event);
    }
    if (!result) throw new Error("The run's stream ended without a result.");
    return result;
  }

  private forward(hub: RunHub, event: StreamEvent): void {
    hub.publish(event.type, event);
    if (event.type === "interrupt") this.notifyChange(hub.threadId);
  }

  /**
   * Waits for running work to finish, up to `timeoutMs`; then hands over what is left: each run
   * is aborted with {@link RunHandedOverError} as the reason, so it stops at its step boundary
   * recording nothing more (its row stays `running`, never `cancelled`), and its lease is
   * released only once its execution has stopped — a late write of the abandoned step could not
   * pass the fence anyway. The other processes are then told, so one of them continues each run
   * from its last checkpoint at once. Resolves with the number of runs handed over.
   */
  async drain(timeoutMs: number): Promise<number> {
    const all = Promise.all([...this.active]);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    const outcome = await Promise.race([all.then(() => "drained" as const), timeout]);
    clearTimeout(timer);
    if (outcome === "drained") return 0;
    const handed: string[] = [];
    for (const [runId, controller] of this.controllers) {
      const hub = this.hubs.get(runId);
      if (!hub) continue;
      controller.abort(new RunHandedOverError(hub.threadId, runId));
      handed.push(hub.threadId);
    }
    await Promise.all([...this.active]);
    // Every execution has stopped and released its lease: the other processes' executors look
    // at these threads now instead of at their next sweep.
    for (const threadId of handed) this.mirror?.queued(threadId);
    return handed.length;
  }
}

/** Builds core's resume command from the HTTP fields. */
export function buildCommand(
  fields: {
    resume?: unknown;
    resumeMap?: Record<string, unknown> | undefined;
    steering?: string | undefined;
    pendingChildren?: "keep" | "cancel" | { resolve?: unknown } | undefined;
  },
  hasResume: boolean,
  principal: ApprovalPrincipal,
  requestId: string | undefined,
): ResumeCommand {
  const options = {
    actor: principal.subject,
    principal,
    ...(fields.steering !== undefined ? { steering: fields.steering } : {}),
    ...(fields.pendingChildren !== undefined
      ? {
          pendingChildren:
            typeof fields.pendingChildren === "string"
              ? fields.pendingChildren
              : { resolve: fields.pendingChildren.resolve ?? null },
        }
      : {}),
    ...(requestId !== undefined ? { requestId } : {}),
  };
  return hasResume
    ? Command.resume(fields.resume, options)
    : Command.resumeMap(fields.resumeMap ?? {}, options);
}
