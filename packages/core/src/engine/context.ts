/**
 * The context a node receives (`ctx`): interrupts, idempotent side effects, custom events,
 * steering, cancellation. One {@link TaskRun} backs the context of one execution of one task;
 * its interrupt calls are matched by {@link InterruptCalls}.
 */
import { randomUUID } from "node:crypto";
import type { StoredInterrupt, TaskSpec } from "../checkpoint/types.ts";
import { InvalidInputError } from "../errors.ts";
import type { InterruptOptions, TaskContext } from "../graph/node.ts";
import type { CheckpointId, RunId, TaskId, ThreadId } from "../ids.ts";
import { InterruptCalls } from "../interrupts/calls.ts";
import { askingTask, withAskingTask } from "../interrupts/interrupt.ts";
import { ATTEMPT_MARK, encodeAttemptMarker, encodeIdempotencyKey } from "../keys.ts";
import type { SteeringRecord } from "../types.ts";
import type { Execution } from "./execution.ts";

/** Marker error thrown from a subgraph node whose child run paused. */
export class ChildPaused extends Error {
  constructor() {
    super("A child run paused on an interrupt.");
    this.name = "ChildPaused";
  }
}

/** Runs `fn` with `run` as the current task (for the free `interrupt()` function). */
export function withTask<T>(run: TaskRun, fn: () => T): T {
  return withAskingTask(run, fn);
}

/** The current task's context, for helpers called from node code. */
export function currentTask(): TaskRun | undefined {
  const task = askingTask();
  return task instanceof TaskRun ? task : undefined;
}

/**
 * State of one execution of one task: the interrupt calls it made, the records it must store,
 * and its child-run counter. Implements {@link TaskContext}.
 */
export class TaskRun implements TaskContext {
  /** Index of the next child run started from this task. */
  childIndex = 0;
  /** True once a child run of this task paused. */
  childPaused = false;
  /** The `interrupt()` calls of this execution. */
  readonly interrupts: InterruptCalls;
  readonly steering: readonly SteeringRecord[];

  constructor(
    readonly exec: Execution,
    readonly task: TaskSpec,
    readonly checkpointId: CheckpointId,
    readonly step: number,
    /** Interrupt rows of this task at this checkpoint, all statuses. */
    existing: readonly StoredInterrupt[],
  ) {
    this.steering = exec.steeringFor(task.id);
    this.interrupts = new InterruptCalls(exec, task, checkpointId, existing);
  }

  get threadId(): ThreadId {
    return this.exec.threadId;
  }
  get runId(): RunId {
    return this.exec.runId;
  }
  get taskId(): TaskId {
    return this.task.id;
  }
  get node(): string {
    return this.task.node;
  }
  get namespace(): readonly string[] {
    return this.exec.namespace;
  }
  get signal(): AbortSignal {
    return this.exec.signal;
  }

  interrupt<Answer = unknown>(payload: unknown, options?: InterruptOptions<Answer>): Answer {
    return this.interrupts.ask(payload, options);
  }

  async once<T>(key: string, fn: (attempt: number) => Promise<T> | T): Promise<T> {
    if (key.startsWith(ATTEMPT_MARK))
      throw new InvalidInputError("ctx.once keys must not start with U+0001 (reserved).", { key });
    const store = this.exec.store;
    const stored = await store.getOnce(this.exec.threadId, this.task.id, key);
    if (stored) return stored.value as T;
    const value = await fn(await this.claimAttempt(key));
    // First write wins: if a concurrent execution stored first, its result is the one replayed.
    const kept = await store.putOnce(this.exec.threadId, this.task.id, key, value);
    return kept.value as T;
  }

  /**
   * Records the start of the next attempt of `once(key)` before its body runs, so a crash mid-body
   * is counted: attempt n is the first marker n this execution stores (first write wins).
   */
  private async claimAttempt(key: string): Promise<number> {
    const store = this.exec.store;
    const token = randomUUID();
    for (let attempt = 1; ; attempt++) {
      const marker = encodeAttemptMarker({ attempt, key });
      const kept = await store.putOnce(this.exec.threadId, this.task.id, marker, {
        token,
        startedAt: this.exec.session.now(),
      });
      if ((kept.value as { token?: unknown } | null)?.token === token) return attempt;
    }
  }

  idempotencyKey(key: string): string {
    return encodeIdempotencyKey({ threadId: this.exec.threadId, taskId: this.task.id, key });
  }

  /** Emits a `messages` stream event: a model's delta, with this task's node, task and run. */
  emitMessage(delta: unknown): void {
    const sink = this.exec.sink;
    if (sink.wants("messages"))
      sink.push({
        type: "messages",
        namespace: [...this.exec.namespace],
        node: this.task.node,
        taskId: this.task.id,
        runId: this.exec.runId,
        delta,
      });
  }

  emit(data: unknown): void {
    const sink = this.exec.sink;
    if (sink.wants("custom"))
      sink.push({
        type: "custom",
        namespace: [...this.exec.namespace],
        node: this.task.node,
        taskId: this.task.id,
        data,
      });
  }
}
