/**
 * Background runs, the same on SQLite and on Postgres: a request is accepted by writing its run
 * as a `queued` row (so the run id of the 202 is readable and joinable at once, and a crash
 * after the 202 loses nothing), and any process with capacity starts the oldest queued run of a
 * thread once the thread is free. The store's rows are the queue: a wake-up (in this process, or
 * a `queued` notice from another) only says where to look, and a periodic sweep finds what no
 * wake-up reached — queued runs nobody started, and runs a dead process left `running` (taken
 * over once its lease expires, from the last checkpoint).
 *
 * A run executes under its request id, from which its run id derives, so two processes that
 * both try to start it cannot run it twice: the thread's lease admits one, and the other finds
 * the run's stored outcome (core's request dedupe) or a busy thread.
 */
import {
  ROOT_STREAM,
  ReinError,
  RunInProgressError,
  ThreadBusyError,
  type Checkpointer,
  type ErrorCode,
  type RunId,
  type RunRecord,
  type RunResult,
  type ThreadId,
  type ThreadRecord,
} from "@rein/core";
import { withoutLeaseWait, type ServedGraph, type GraphRegistry } from "./registry.ts";
import { forkPointBefore, isQueuedRoot, RunAdmission, type RunRequest } from "./run-admission.ts";
import type { RunManager } from "./run-manager.ts";
import type { PgFanout } from "./scale/fanout.ts";
import { threadIdOf } from "./ids.ts";

/** A structured log, as Fastify's (pino) logger offers it. */
export interface BackgroundLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/** Settings of {@link BackgroundRuns}. */
export interface BackgroundSettings {
  store: Checkpointer;
  registry: GraphRegistry;
  runs: RunManager;
  /** Runs this process executes at once; 0 only accepts them (others execute them). */
  concurrency: number;
  /** The graphs' lease TTL: the sweep runs four times per TTL, so a takeover waits at most ~1.25 TTL. */
  leaseTtlMs: number;
  /** Whether the sweep continues runs a dead process left `running`. */
  recover: boolean;
  /** On Postgres: wake-ups and cancel requests from the other processes. */
  fanout?: PgFanout | null;
  log?: BackgroundLog | undefined;
}

/** The actor under which a run left by a dead process is continued. */
const RECOVERY_ACTOR = "system:recovery";

/** Statuses after which a run never changes again. */
const FINISHED = new Set<RunRecord["status"]>(["done", "error", "cancelled", "interrupted"]);

/** A run that was refused when its turn came (its thread was paused, or its input was invalid). */
export class QueuedRunRefusedError extends ReinError {
  constructor(run: RunRecord) {
    const error = run.error ?? { name: "Error", message: "The queued run was refused." };
    super((error.code ?? "run_in_progress") as ErrorCode, error.message, {
      threadId: run.threadId,
      runId: run.runId,
    });
  }
}

/** The queue of background runs, and the sweep that keeps it moving. */
export class BackgroundRuns {
  /** Threads known to have queued runs: a run ending on one of them looks for the next. */
  private readonly hinted = new Set<string>();
  /** Threads this process is starting a run of right now, with the start in flight. */
  private readonly starting = new Map<string, Promise<void>>();
  /** Threads that waited for a free slot. */
  private readonly waitingForSlot = new Set<string>();
  private executing = 0;
  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<void> | null = null;
  private stopped = false;
  private readonly unsubscribe: (() => void)[] = [];
  private readonly admission: RunAdmission;

  constructor(private readonly settings: BackgroundSettings) {
    this.admission = new RunAdmission(settings.store, settings.runs);
  }

  /** Starts the sweep and listens for wake-ups; runs a first sweep at once. */
  start(): void {
    const { fanout, runs } = this.settings;
    // Change notices of other processes reach the run manager too (`relayFanout`): one listener
    // hears both.
    this.unsubscribe.push(runs.onChange((threadId) => this.wake(threadId, false)));
    if (fanout) {
      this.unsubscribe.push(
        fanout.onQueued((threadId) => this.wake(threadId, true)),
        // Notices sent while the listener was down are lost: look at the rows again.
        fanout.onReconnect(() => void this.sweep()),
      );
    }
    void this.sweep();
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    const base = Math.max(100, Math.floor(this.settings.leaseTtlMs / 4));
    // Jitter spreads the sweeps of many processes over the interval.
    const delay = Math.floor(base * (0.8 + Math.random() * 0.4));
    this.timer = setTimeout(() => {
      void this.sweep().finally(() => this.schedule());
    }, delay);
    this.timer.unref();
  }

  /**
   * Stops sweeping and listening, and waits for the starts in flight: a run this process was
   * starting is then running, and the run manager's drain finishes it. Runs still queued stay
   * queued, for the next process.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    for (const off of this.unsubscribe.splice(0)) off();
    await Promise.all([...this.starting.values(), this.sweeping]);
  }

  /**
   * Accepts a run (see {@link RunAdmission.admit}) and wakes the executors, here and elsewhere.
   *
   * @throws ThreadBusyError, ThreadInterruptedError, RunInProgressError, InvalidInputError.
   */
  async admit(thread: ThreadRecord, graph: ServedGraph, request: RunRequest): Promise<RunRecord> {
    const record = await this.admission.admit(thread, graph, request);
    this.announce(thread.threadId);
    return record;
  }

  /** Wakes this process and the others for a thread that has a new queued run. */
  private announce(threadId: string): void {
    this.settings.runs.mirrorQueued(threadId);
    this.wake(threadId, true);
  }

  /**
   * A thread may have a queued run to start: `queued` says it does (a notice, an admission);
   * otherwise (a run ended, the queue changed) it is looked at only if it had some.
   */
  private wake(threadId: string, queued: boolean): void {
    if (queued) this.hinted.add(threadId);
    if (!this.hinted.has(threadId) || this.settings.concurrency < 1 || this.stopped) return;
    void this.startNext(threadId);
  }

  /**
   * Starts the oldest queued run of a thread, if the thread is free and a slot is — never once
   * stopped: the runs a shutdown drains free their slots as they end, and a start then would
   * begin work the process is about to abandon (its first step run here, its commit lost with the
   * closing pool, the whole run taken over and that step run again elsewhere).
   */
  private startNext(threadId: string): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const inFlight = this.starting.get(threadId);
    if (inFlight) return inFlight;
    if (this.executing >= this.settings.concurrency) {
      this.waitingForSlot.add(threadId);
      return Promise.resolve();
    }
    const start = this.startOldest(threadId);
    this.starting.set(threadId, start);
    return start;
  }

  private async startOldest(threadId: string): Promise<void> {
    try {
      const { store } = this.settings;
      const queued = (await store.listRuns(threadIdOf(threadId)))
        .filter(isQueuedRoot)
        .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
      const next = queued[0];
      if (!next) {
        this.hinted.delete(threadId);
        // A notice without a queued run: a process shutting down handed its run over.
        await this.recoverThread(threadId);
        return;
      }
      if (this.settings.runs.executing(next.runId)) return;
      await this.execute(next);
    } catch (error) {
      this.settings.log?.warn({ err: error, threadId }, "could not start a queued run");
    } finally {
      this.starting.delete(threadId);
    }
  }

  /** Executes a queued run; refusals at its start are recorded on its row. */
  private async execute(run: RunRecord): Promise<void> {
    const request = run.options?.queued;
    const graph = await this.graphOf(run);
    if (!request || !graph) return;
    const checkpointId =
      request.multitask === "rollback" && request.rollbackOf
        ? await this.forkPoint(run.threadId, request.rollbackOf)
        : undefined;
    this.executing += 1;
    const active = this.settings.runs.start(
      graph,
      { kind: "input", input: request.input, requestId: request.requestId },
      run.runId,
      {
        threadId: run.threadId,
        runId: run.runId,
        requestId: request.requestId,
        actor: request.actor,
        ...(request.onPending ? { onPending: request.onPending } : {}),
        ...(run.options?.interruptBefore ? { interruptBefore: run.options.interruptBefore } : {}),
        ...(run.options?.interruptAfter ? { interruptAfter: run.options.interruptAfter } : {}),
        ...(checkpointId ? { checkpointId } : {}),
      },
    );
    void active.result
      .then(
        () => true,
        (error: unknown) => this.refused(run, error),
      )
      .then((ran) => {
        this.executing -= 1;
        // A busy thread is not tried again at once (that would spin against the store while
        // another process runs it): the end of the run holding it wakes the queue.
        this.afterRun(run.threadId, ran);
      });
  }

  /** A slot, and the thread unless `threadFree` is false, are free again: start what waits. */
  private afterRun(threadId: string, threadFree = true): void {
    if (threadFree) this.wake(threadId, false);
    for (const waiting of [...this.waitingForSlot]) {
      if (this.executing >= this.settings.concurrency) return;
      this.waitingForSlot.delete(waiting);
      void this.startNext(waiting);
    }
  }

  /**
   * A queued run that failed before it started: a busy thread is somebody else's turn (the end
   * of that run wakes the queue again); a thread paused on interrupts, or invalid input, refuses
   * the run for good, recorded on its row so the caller who got the 202 can read why.
   *
   * @returns whether the thread may be free for its next queued run.
   */
  private async refused(run: RunRecord, error: unknown): Promise<boolean> {
    if (error instanceof ThreadBusyError) return false;
    if (error instanceof RunInProgressError && error.details["status"] === "running") return false;
    const { store } = this.settings;
    const stored = await store.getRun(run.runId).catch(() => undefined);
    if (stored?.status !== "queued") return true;
    const described = ReinError.is(error)
      ? { name: error.name, message: error.message, code: error.code }
      : { name: "Error", message: error instanceof Error ? error.message : String(error) };
    await store
      .putRun({ ...stored, status: "error", updatedAt: new Date().toISOString(), error: described })
      .catch(() => undefined);
    this.settings.runs.notifyChange(run.threadId);
    this.settings.log?.info(
      { threadId: run.threadId, runId: run.runId, error: described },
      "queued run refused",
    );
    return true;
  }

  /** The checkpoint a `rollback` run starts from: the last one before the rolled-back run's. */
  private forkPoint(threadId: ThreadId, rolledBack: RunId): Promise<string | undefined> {
    return forkPointBefore(this.settings.store, threadId, rolledBack);
  }

  private async graphOf(run: RunRecord): Promise<ServedGraph | undefined> {
    const { store, registry } = this.settings;
    const thread = await store.getThread(run.threadId);
    if (!thread) return undefined;
    const graph = await registry.forThread(store, thread).catch(() => undefined);
    if (!graph) return undefined;
    // A busy thread is somebody else's turn.
    return withoutLeaseWait(graph);
  }

  /**
   * Finds what no wake-up reached: queued runs (their notice was lost, or the process that took
   * them died before starting them), and runs left `running` whose lease expired (their process
   * died): those are continued from their last checkpoint. Bounded per sweep; logged.
   */
  sweep(): Promise<void> {
    if (this.stopped || this.settings.concurrency < 1) return Promise.resolve();
    this.sweeping ??= this.sweepOnce()
      .catch((error: unknown) => this.settings.log?.warn({ err: error }, "background sweep failed"))
      .finally(() => (this.sweeping = null));
    return this.sweeping;
  }

  private async sweepOnce(): Promise<void> {
    const { store, runs } = this.settings;
    const queued = await store.listRunsByStatus({ status: "queued", rootOnly: true, limit: 100 });
    for (const run of queued.items) this.wake(run.threadId, true);
    if (!this.settings.recover) return;
    const running = await store.listRunsByStatus({ status: "running", rootOnly: true, limit: 100 });
    const recovered: string[] = [];
    for (const run of running.items) {
      if (this.executing >= this.settings.concurrency) break;
      if (runs.executing(run.runId) || (await store.getLease(run.threadId))) continue;
      if (await this.recover(run)) recovered.push(run.runId);
    }
    if (recovered.length > 0) this.settings.log?.info({ runs: recovered }, "recovered runs");
  }

  /**
   * Continues the thread's head run if it is left `running` with no lease (handed over by a
   * process that shut down, or left by a dead one whose lease expired).
   */
  private async recoverThread(threadId: string): Promise<void> {
    if (!this.settings.recover || this.executing >= this.settings.concurrency) return;
    const { store, runs } = this.settings;
    const head = await store.getCheckpoint(threadIdOf(threadId), ROOT_STREAM);
    if (!head || runs.executing(head.runId)) return;
    const run = await store.getRun(head.runId);
    if (run?.status !== "running" || run.parentRunId !== null) return;
    if (await store.getLease(threadIdOf(threadId))) return;
    if (await this.recover(run)) this.settings.log?.info({ runs: [run.runId] }, "recovered runs");
  }

  /** Continues a run a dead process left `running`, from its thread's head. */
  private async recover(run: RunRecord): Promise<boolean> {
    const head = await this.settings.store.getCheckpoint(run.threadId, ROOT_STREAM);
    // Only the head's run can be continued; another left `running` is an older, stranded row.
    if (head?.runId !== run.runId) return false;
    const graph = await this.graphOf(run);
    if (!graph) return false;
    this.executing += 1;
    // A queued run continues under its request id, so its result is stored for the request id:
    // a `wait: true` request polling for it (see `outcome`) gets it.
    const requestId = run.options?.queued?.requestId;
    const active = this.settings.runs.start(
      graph,
      { kind: "input", input: null, ...(requestId ? { requestId } : {}) },
      run.runId,
      { threadId: run.threadId, actor: RECOVERY_ACTOR, ...(requestId ? { requestId } : {}) },
    );
    void active.result
      .catch(() => undefined)
      .finally(() => {
        this.executing -= 1;
        this.afterRun(run.threadId);
      });
    return true;
  }

  /**
   * The outcome of a queued run, once it has one (for a request that waits for it): the result
   * its request stored, or the refusal recorded on its row.
   *
   * @throws QueuedRunRefusedError when the run was refused at its start.
   */
  async outcome(runId: RunId, requestId: string, signal?: AbortSignal): Promise<RunResult> {
    const { store, runs } = this.settings;
    let delay = 20;
    for (;;) {
      const stored = await store.getRequestResult(requestId);
      if (stored?.result !== undefined && stored.result !== null) return stored.result as RunResult;
      const run = await store.getRun(runId);
      if (run && FINISHED.has(run.status) && run.error && !runs.executing(runId)) {
        const again = await store.getRequestResult(requestId);
        if (again?.result !== undefined && again.result !== null) return again.result as RunResult;
        throw new QueuedRunRefusedError(run);
      }
      if (signal?.aborted) throw signal.reason;
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 250);
    }
  }
}
