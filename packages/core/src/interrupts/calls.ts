/**
 * Interrupt calls of one execution of one task: matching each `interrupt()` call to its slot
 * (call order, or `key`), returning the stored answer, the determinism guard (a re-run asking a
 * different question supersedes the old one), and raising a new question as a pause.
 */
import { z } from "zod";
import type { OnTimeout, StoredInterrupt, TaskSpec } from "../checkpoint/types.ts";
import { InvalidInputError, MissingCheckpointerError, NonSerializableError } from "../errors.ts";
import type { InterruptOptions } from "../graph/node.ts";
import { interruptIdFor, type CheckpointId } from "../ids.ts";
import { encodeSlot } from "../keys.ts";
import type { Serializer } from "../serde.ts";
import { traceInterrupt } from "../telemetry/runtime-spans.ts";
import { rememberAnswerSchema, storedAnswerSchema } from "./answer-schemas.ts";
import { resolvePolicy } from "./approvers.ts";
import { planLadder } from "./ladder.ts";
import type { InterruptScope } from "./scope.ts";

/** Thrown by `interrupt()` to unwind the node; the runtime turns it into a pause. */
export class GraphInterrupt extends Error {
  constructor(readonly interruptId: string) {
    super(
      "The task paused on an interrupt. (This exception is caught by the Rein runtime; if you see it, a node swallowed and rethrew it outside a run.)",
    );
    this.name = "GraphInterrupt";
  }
}

/**
 * A {@link GraphInterrupt} without a stack trace: it is control flow that the runtime catches, not
 * a failure anyone reads, and capturing the stack cost more than the rest of raising the pause.
 */
function pauseSignal(interruptId: string): GraphInterrupt {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new GraphInterrupt(interruptId);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Thrown inside a task whose interrupt was cancelled (timeout with `onTimeout: "cancel"`). */
export class TaskCancelled extends Error {
  constructor() {
    super("The task's interrupt was cancelled; the task ends without writes.");
    this.name = "TaskCancelled";
  }
}

/** The interrupt calls one execution of one task made, and the rows it must store. */
export class InterruptCalls {
  /** Interrupt rows created by this execution (new or re-raised with a new revision). */
  readonly created: StoredInterrupt[] = [];
  /** Rows the determinism guard (or a rejected answer) superseded. */
  readonly superseded: StoredInterrupt[] = [];
  /** Ids of the interrupts this execution is paused on. */
  readonly pausedOn: string[] = [];
  private calls = 0;
  private readonly keys = new Set<string>();

  constructor(
    private readonly exec: InterruptScope,
    private readonly task: TaskSpec,
    private readonly checkpointId: CheckpointId,
    /** Interrupt rows of this task at this checkpoint, all statuses. */
    private readonly existing: readonly StoredInterrupt[],
  ) {}

  /** One `interrupt()` call: its stored answer, or a pause (thrown as {@link GraphInterrupt}). */
  ask<Answer = unknown>(payload: unknown, options: InterruptOptions<Answer> = {}): Answer {
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
    const slot = encodeSlot(
      options.key !== undefined ? { kind: "key", key: options.key } : { kind: "order", order },
    );
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
        throw pauseSignal(latest.id);
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
    options.onAnswer?.({
      interruptId: record.id,
      actor: record.answeredBy ?? null,
      answeredAt: record.answeredAt ?? null,
    });
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
    const now = exec.clock();
    // The row's deadline is the timer's first step: a reminder, the escalation or the timeout.
    const { ladder, deadline } = planLadder(options, now);
    let onTimeout: OnTimeout | null = null;
    if (options.timeout !== undefined) {
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
      checkpointId: this.checkpointId,
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
      ...(ladder ? { ladder } : {}),
      answerSchema: options.answer ? storedAnswerSchema(options.answer) : null,
      policy: resolvePolicy(
        options.approvers ?? exec.approvers,
        payload === undefined ? null : payload,
        exec.requester,
      ),
    };
    if (options.answer) rememberAnswerSchema(id, options.answer);
    this.created.push(record);
    traceInterrupt(record);
    this.pausedOn.push(id);
    throw pauseSignal(id);
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
