/**
 * The context a node receives (`ctx`): interrupts, idempotent side effects, custom events,
 * steering, cancellation. One {@link TaskRun} backs the context of one execution of one task.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { Schema } from "../channels.ts";
import { InvalidInputError, MissingCheckpointerError, NonSerializableError } from "../errors.ts";
import type { Serializer } from "../serde.ts";
import { interruptIdFor, type RunId, type TaskId, type ThreadId } from "../ids.ts";
import type { OnTimeout, StoredInterrupt, TaskSpec } from "../checkpoint/types.ts";
import type { SteeringRecord } from "../types.ts";
import { rememberAnswerSchema, storedAnswerSchema } from "./answer-schemas.ts";
import type { Execution } from "./execution.ts";
import { parseDuration } from "./duration.ts";

/** Options of one `interrupt()` call. */
export interface InterruptOptions<Answer> {
  /**
   * Derives the interrupt id from this key instead of the call order, so concurrent calls that
   * reach `interrupt()` in another order on a re-run still get their own answers.
   */
  key?: string;
  /** Schema of the answer: a non-matching answer is refused before anything is stored. */
  answer?: z.ZodType<Answer>;
  /** Deadline: milliseconds or a duration such as `"90s"`, `"15m"`, `"3d"`. */
  timeout?: string | number;
  /** At the deadline: answer with this value, or `"cancel"` the task. Default `"cancel"`. */
  onTimeout?: Answer | "cancel";
}

/** What node code sees as its second argument. */
export interface NodeContext<_S extends Schema = Schema> {
  readonly threadId: ThreadId;
  readonly runId: RunId;
  readonly taskId: TaskId;
  readonly node: string;
  readonly namespace: readonly string[];
  readonly step: number;
  /** Aborted when the run is cancelled. */
  readonly signal: AbortSignal;
  /** Steering instructions that target this task, its run or an ancestor run, oldest first. */
  readonly steering: readonly SteeringRecord[];
  /**
   * Pauses the run to ask a person; on resume returns the answer. Not a blocking wait: it throws,
   * the runtime records the question, and the node re-runs from its first statement on resume.
   *
   * @throws MissingCheckpointerError when the graph has no checkpointer.
   * @throws NonSerializableError when `payload` cannot be stored.
   */
  interrupt<Answer = unknown>(payload: unknown, options?: InterruptOptions<Answer>): Answer;
  /**
   * Runs `fn` until it has once returned, per (thread, task, key), and replays its stored result
   * on every re-run. Guard side effects that happen before an `interrupt()` with it.
   *
   * The guarantee is **at least once, with one stable key per attempt series; exactly once
   * against an API that dedupes on the key**: a crash (or a thrown error) between the effect and
   * storing its result runs `fn` again, with the same {@link NodeContext.idempotencyKey}. `fn`
   * receives its attempt number (1 on the first run of the series, counted durably across
   * processes), so a later attempt can look up what an earlier one did before acting again.
   *
   * @example
   * const receipt = await ctx.once("charge", (attempt) =>
   *   payments.charge({ amount, idempotencyKey: ctx.idempotencyKey("charge"), retry: attempt > 1 }),
   * );
   * @throws InvalidInputError for a key starting with U+0001 (reserved for attempt markers).
   */
  once<T>(key: string, fn: (attempt: number) => Promise<T> | T): Promise<T>;
  /** A stable key for (thread, task, key), to hand to an external API as its idempotency key. */
  idempotencyKey(key: string): string;
  /** Emits a `custom` stream event. */
  emit(data: unknown): void;
}

/** Thrown by `interrupt()` to unwind the node; the runtime turns it into a pause. */
export class GraphInterrupt extends Error {
  constructor(readonly interruptId: string) {
    super(
      "The task paused on an interrupt. (This exception is caught by the Rein runtime; if you see it, a node swallowed and rethrew it outside a run.)",
    );
    this.name = "GraphInterrupt";
  }
}

/** Thrown inside a task whose interrupt was cancelled (timeout with `onTimeout: "cancel"`). */
export class TaskCancelled extends Error {
  constructor() {
    super("The task's interrupt was cancelled; the task ends without writes.");
    this.name = "TaskCancelled";
  }
}

const storage = new AsyncLocalStorage<TaskRun>();

/** Prefix of the once-keys that count attempts; user keys cannot start with it. */
const ATTEMPT_MARK = "\u0001";

/** Runs `fn` with `run` as the current task (for the free `interrupt()` function). */
export function withTask<T>(run: TaskRun, fn: () => T): T {
  return storage.run(run, fn);
}

/**
 * The free form of `ctx.interrupt`, which finds the running task through AsyncLocalStorage.
 *
 * @throws InvalidInputError when called outside a running node.
 */
export function interrupt<Answer = unknown>(
  payload: unknown,
  options?: InterruptOptions<Answer>,
): Answer {
  const run = storage.getStore();
  if (!run)
    throw new InvalidInputError(
      "interrupt() was called outside a running node; call it from node code (or use ctx.interrupt).",
    );
  return run.interrupt(payload, options);
}

/** The current task's context, for helpers called from node code. */
export function currentTask(): TaskRun | undefined {
  return storage.getStore();
}

/**
 * State of one execution of one task: the interrupt calls it made, the records it must store,
 * and its child-run counter. Implements {@link NodeContext}.
 */
export class TaskRun implements NodeContext {
  /** Interrupt rows created by this execution (new or re-raised with a new revision). */
  readonly created: StoredInterrupt[] = [];
  /** Ids the determinism guard superseded. */
  readonly superseded: StoredInterrupt[] = [];
  /** Ids of the interrupts this execution is paused on. */
  readonly pausedOn: string[] = [];
  /** Index of the next child run started from this task. */
  childIndex = 0;
  /** True once a child run of this task paused. */
  childPaused = false;
  private calls = 0;
  private readonly keys = new Set<string>();
  readonly steering: readonly SteeringRecord[];

  constructor(
    readonly exec: Execution,
    readonly task: TaskSpec,
    readonly checkpointId: string,
    readonly step: number,
    /** Interrupt rows of this task at this checkpoint, all statuses. */
    private readonly existing: readonly StoredInterrupt[],
  ) {
    this.steering = exec.steeringFor(task.id);
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

  interrupt<Answer = unknown>(payload: unknown, options: InterruptOptions<Answer> = {}): Answer {
    if (!this.exec.durable) throw new MissingCheckpointerError();
    const order = this.calls++;
    if (options.key !== undefined) {
      if (this.keys.has(options.key))
        throw new InvalidInputError(
          `interrupt key "${options.key}" was used twice in one task; keys must be unique per task.`,
          {
            key: options.key,
          },
        );
      this.keys.add(options.key);
    }
    const slot = options.key !== undefined ? `k:${options.key}` : `o:${order}`;
    // Serializing now both validates the payload (NonSerializableError names the bad path before
    // anything is stored) and gives the canonical text the determinism guard compares.
    const text = serializePayload(this.exec.serializer, payload);
    const latest = this.latestInSlot(slot);
    if (latest) {
      const same = this.exec.serializer.serialize(latest.payload ?? null) === text;
      if (!same && this.exec.determinism === "strict" && latest.status !== "superseded") {
        this.superseded.push(latest);
        this.exec.debug(
          `interrupt ${latest.id} superseded: the node asked a different question on re-run (order ${order}), so its answer is not applied`,
          {
            interruptId: latest.id,
            taskId: this.task.id,
            order,
          },
        );
        return this.raise(payload, order, slot, latest.revision + 1, options);
      }
      if (latest.status === "answered") return this.decodeAnswer(latest, payload, order, options);
      if (latest.status === "cancelled") throw new TaskCancelled();
      if (latest.status === "pending") {
        if (options.answer) rememberAnswerSchema(latest.id, options.answer);
        this.pausedOn.push(latest.id);
        throw new GraphInterrupt(latest.id);
      }
      return this.raise(payload, order, slot, latest.revision + 1, options);
    }
    return this.raise(payload, order, slot, 0, options);
  }

  private latestInSlot(slot: string): StoredInterrupt | undefined {
    let latest: StoredInterrupt | undefined;
    for (const record of this.existing)
      if (record.slot === slot && (!latest || record.revision > latest.revision)) latest = record;
    for (const record of this.created)
      if (record.slot === slot && (!latest || record.revision > latest.revision)) latest = record;
    return latest;
  }

  private decodeAnswer<Answer>(
    record: StoredInterrupt,
    payload: unknown,
    order: number,
    options: InterruptOptions<Answer>,
  ): Answer {
    if (!options.answer) return record.answer as Answer;
    // Parsing with the live schema applies its transforms and defaults and gives the node a typed
    // value. An answer checked only against the stored JSON Schema (by a process that did not
    // know this schema) can fail here: the question is asked again instead of failing the run.
    let parsed: ReturnType<typeof options.answer.safeParse>;
    try {
      parsed = options.answer.safeParse(record.answer);
    } catch {
      // An async refinement cannot run inside the synchronous interrupt(); it ran at answer time.
      return record.answer as Answer;
    }
    if (parsed.success) return parsed.data;
    const message = z.prettifyError(parsed.error);
    this.superseded.push(record);
    const exec = this.exec;
    const id = interruptIdFor(
      exec.threadId,
      exec.namespace,
      this.task.id,
      record.slot,
      record.revision + 1,
    );
    this.exec.rejectAnswer({
      interruptId: record.id,
      askedAgainAs: id,
      message: `The answer to interrupt ${record.id} does not match its schema: ${message}`,
      issues: parsed.error.issues,
    });
    this.exec.debug(
      `interrupt ${record.id} superseded: its answer does not match the schema the node declares, so the question is asked again as ${id}`,
      { interruptId: record.id, askedAgainAs: id, taskId: this.task.id, order },
    );
    return this.raise(payload, order, record.slot, record.revision + 1, options);
  }

  private raise<Answer>(
    payload: unknown,
    order: number,
    slot: string,
    revision: number,
    options: InterruptOptions<Answer>,
  ): never {
    const exec = this.exec;
    const id = interruptIdFor(exec.threadId, exec.namespace, this.task.id, slot, revision);
    const now = new Date();
    let deadline: string | null = null;
    let onTimeout: OnTimeout | null = null;
    if (options.timeout !== undefined) {
      deadline = new Date(now.getTime() + parseDuration(options.timeout)).toISOString();
      onTimeout =
        options.onTimeout === undefined || options.onTimeout === "cancel"
          ? { kind: "cancel" }
          : { kind: "value", value: options.onTimeout };
    }
    const record: StoredInterrupt = {
      id,
      runId: exec.runId,
      threadId: exec.threadId,
      node: this.task.node,
      taskId: this.task.id,
      namespace: [...exec.namespace],
      order,
      payload: payload === undefined ? null : payload,
      kind: "dynamic",
      status: "pending",
      checkpointId: this.checkpointId as StoredInterrupt["checkpointId"],
      createdAt: now.toISOString(),
      stream: exec.stream,
      slot,
      revision,
      path: [
        ...exec.path,
        { runId: exec.runId, graph: exec.graphName, node: this.task.node, taskId: this.task.id },
      ],
      graph: exec.graphName,
      tenant: exec.tenant,
      deadline,
      onTimeout,
      answerSchema: options.answer ? storedAnswerSchema(options.answer) : null,
    };
    if (options.answer) rememberAnswerSchema(id, options.answer);
    this.created.push(record);
    this.pausedOn.push(id);
    throw new GraphInterrupt(id);
  }

  async once<T>(key: string, fn: (attempt: number) => Promise<T> | T): Promise<T> {
    if (key.startsWith(ATTEMPT_MARK))
      throw new InvalidInputError("ctx.once keys must not start with U+0001 (reserved).", { key });
    const saver = this.exec.saver;
    const stored = await saver.getOnce(this.exec.threadId, this.task.id, key);
    if (stored) return stored.value as T;
    const value = await fn(await this.claimAttempt(key));
    // First write wins: if a concurrent execution stored first, its result is the one replayed.
    const kept = await saver.putOnce(this.exec.threadId, this.task.id, key, value);
    return kept.value as T;
  }

  /**
   * Records the start of the next attempt of `once(key)` before its body runs, so a crash mid-body
   * is counted: attempt n is the first marker n this execution stores (first write wins).
   */
  private async claimAttempt(key: string): Promise<number> {
    const saver = this.exec.saver;
    const token = randomUUID();
    for (let attempt = 1; ; attempt++) {
      const marker = `${ATTEMPT_MARK}attempt:${attempt}:${key}`;
      const kept = await saver.putOnce(this.exec.threadId, this.task.id, marker, {
        token,
        startedAt: new Date().toISOString(),
      });
      if ((kept.value as { token?: unknown } | null)?.token === token) return attempt;
    }
  }

  idempotencyKey(key: string): string {
    return `rein:${this.exec.threadId}:${this.task.id}:${key}`;
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

function serializePayload(serializer: Serializer, payload: unknown): string {
  try {
    return serializer.serialize(payload === undefined ? null : payload);
  } catch (error) {
    if (error instanceof NonSerializableError) {
      const path = typeof error.details.path === "string" ? error.details.path : "";
      const what =
        typeof error.details.what === "string"
          ? error.details.what
          : "a value that cannot be stored";
      throw new NonSerializableError(
        path === "" ? "payload" : path.startsWith("[") ? `payload${path}` : `payload.${path}`,
        what,
      );
    }
    throw error;
  }
}
