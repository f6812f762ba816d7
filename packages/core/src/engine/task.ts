/**
 * Executes one task: calls the node with its context, retries per policy, and turns the outcome
 * (writes, pause, failure) into a task result that is stored before the step's barrier.
 */
import { traceTask } from "../telemetry/runtime-spans.ts";
import { setImmediate as tick } from "node:timers/promises";
import type {
  CheckpointRecord,
  StepCommit,
  TaskOutcome,
  StoredInterrupt,
  TaskResult,
  TaskSpec,
} from "../checkpoint/types.ts";
import { InvalidUpdateError, ReinError } from "../errors.ts";
import { assertStorable } from "../serde.ts";
import { isCommand, isSend } from "../graph/command.ts";
import type { GraphDefinition, NodeSpec } from "../graph/definition.ts";
import type { RetryPolicy } from "../graph/node.ts";
import { GraphInterrupt, TaskCancelled } from "../interrupts/calls.ts";
import { decodeTrigger } from "../keys.ts";
import { taskArgument } from "../thread/head-cache.ts";
import { ChildPaused, TaskRun, withTask } from "./context.ts";
import { emitInterrupt } from "./events.ts";
import type { Execution } from "./execution.ts";

/** Inputs of {@link runTask}. */
export interface TaskInput {
  exec: Execution;
  definition: GraphDefinition;
  head: CheckpointRecord;
  task: TaskSpec;
  values: Record<string, unknown>;
  /** Interrupt rows of the head checkpoint. */
  interrupts: readonly StoredInterrupt[];
  /** Store a `writes` result right away (steps with several tasks). Pauses are always stored. */
  persist: boolean;
  /** What the pause write also carries when the pause ends the run (see `LoopOptions`). */
  runEndAtPause?: (() => RunEnd) | undefined;
}

/**
 * What the write that ends a run carries besides its own rows: the run row in its final status
 * and, when nothing is written after it, the end of the lease.
 */
export type RunEnd = Pick<StepCommit, "runs" | "releaseLease"> &
  Partial<Pick<TaskOutcome, "thenReadPending">>;

/** How one task settled after its attempts: its writes, a pause, an error, or cancelled. */
export type SettledTask =
  | { kind: "writes"; task: TaskSpec; result: TaskResult }
  | { kind: "paused"; task: TaskSpec; result: TaskResult; created: StoredInterrupt[] }
  | { kind: "error"; task: TaskSpec; error: unknown; result?: undefined }
  | { kind: "cancelled"; task: TaskSpec; result?: undefined };

/** Runs one task to an outcome. Never throws for node errors: they become `error` outcomes. */
export function runTask(input: TaskInput): Promise<SettledTask> {
  return traceTask(input.exec, input.task, () => runTaskUntraced(input));
}

async function runTaskUntraced(input: TaskInput): Promise<SettledTask> {
  const { exec, task, head } = input;
  const spec = input.definition.nodes.get(task.node);
  if (!spec)
    return {
      kind: "error",
      task,
      error: new InvalidUpdateError(`Task for unknown node "${task.node}".`, { node: task.node }),
    };
  const mine = input.interrupts.filter(
    (i) => i.taskId === task.id && i.checkpointId === head.id && i.kind === "dynamic",
  );
  const nodeInput =
    decodeTrigger(task.trigger).kind === "send" ? taskArgument(head, task) : input.values;
  const policy = spec.options.retry;
  const maxAttempts = policy ? Math.max(1, policy.maxAttempts ?? 3) : 1;
  emitTask(exec, task, "start");

  for (let attempt = 1; ; attempt++) {
    const run = new TaskRun(exec, task, head.id, head.step + 1, mine);
    let returned: unknown;
    let thrown: unknown;
    let threw = false;
    try {
      returned = await withTask(run, () => invokeNode(spec, nodeInput, run));
    } catch (error) {
      threw = true;
      thrown = error;
    }
    // Cancel means cancelled: once the run's signal fired, whatever the node did afterwards
    // (rejected with an AbortError, as clients do, threw something else, returned, or even
    // paused) is dropped unrecorded, and the loop ends the run `cancelled`.
    if (exec.aborted) {
      emitTask(exec, task, "end", "cancelled");
      return { kind: "cancelled", task };
    }
    if (run.interrupts.pausedOn.length > 0 || run.childPaused) {
      // Calls made concurrently (Promise.all over tools) may reach interrupt() a tick after the
      // first one rejected the node's promise: give them that tick so every call is recorded.
      await tick();
      await tick();
      return pause(input, run, threw ? thrown : undefined, threw);
    }
    if (threw && thrown instanceof TaskCancelled)
      return finish(
        input,
        { kind: "writes", taskId: task.id, node: task.node, writes: [], gotos: [], sends: [] },
        "cancelled",
      );
    if (threw) {
      if (attempt < maxAttempts && retryable(policy, thrown) && !exec.aborted) {
        exec.debug(`task ${task.id} (${task.node}) failed on attempt ${attempt}; retrying`, {
          error: String(thrown),
        });
        await sleep(backoff(policy, attempt), exec.signal);
        continue;
      }
      emitTask(exec, task, "end", "error");
      return { kind: "error", task, error: thrown };
    }
    let result: TaskResult;
    try {
      result = toWrites(input.definition, task, returned);
      // A value that cannot be stored (a function, a class instance) fails this task with a
      // typed error naming it, instead of failing the commit after the run was marked running.
      checkStorable(exec, result);
    } catch (error) {
      emitTask(exec, task, "end", "error");
      return { kind: "error", task, error };
    }
    return finish(input, result, "writes");
  }
}

/** Emits a `tasks` event when someone listens. */
function emitTask(
  exec: Execution,
  task: TaskSpec,
  phase: "start" | "end",
  outcome?: "writes" | "paused" | "error" | "cancelled",
): void {
  if (!exec.sink.wants("tasks")) return;
  exec.sink.push({
    type: "tasks",
    namespace: [...exec.namespace],
    node: task.node,
    taskId: task.id,
    phase,
    ...(outcome ? { outcome } : {}),
  });
}

function invokeNode(spec: NodeSpec, input: unknown, run: TaskRun): unknown {
  return spec.run(input, run);
}

async function finish(
  input: TaskInput,
  result: TaskResult,
  outcome: "writes" | "cancelled",
): Promise<SettledTask> {
  const { exec, task, head } = input;
  if (input.persist)
    await exec.store.putTaskOutcome({
      threadId: exec.threadId,
      stream: exec.stream,
      checkpointId: head.id,
      result,
      interrupts: [],
      superseded: [],
    });
  emitTask(exec, task, "end", outcome);
  return { kind: "writes", task, result };
}

async function pause(
  input: TaskInput,
  run: TaskRun,
  thrown: unknown,
  threw: boolean,
): Promise<SettledTask> {
  const { exec, task, head } = input;
  if (!threw || !(thrown instanceof GraphInterrupt || isChildPause(thrown)))
    exec.debug(
      `task ${task.id} (${task.node}) caught its interrupt; it stays paused and its return value is discarded`,
      {
        taskId: task.id,
        interrupts: run.interrupts.pausedOn,
      },
    );
  const result: TaskResult = { kind: "paused", taskId: task.id, node: task.node };
  const page = await exec.store.putTaskOutcome({
    threadId: exec.threadId,
    stream: exec.stream,
    checkpointId: head.id,
    result,
    interrupts: run.interrupts.created,
    superseded: run.interrupts.superseded.map((s) => s.id),
    ...input.runEndAtPause?.(),
  });
  // The run result's page, when it came back with the pause that ended the run.
  if (page) exec.session.keepPendingPage(page);
  for (const record of run.interrupts.superseded) record.status = "superseded";
  for (const record of run.interrupts.created) emitInterrupt(exec.sink, record);
  emitTask(exec, task, "end", "paused");
  return { kind: "paused", task, result, created: run.interrupts.created };
}

function isChildPause(error: unknown): boolean {
  return error instanceof ChildPaused;
}

function toWrites(definition: GraphDefinition, task: TaskSpec, returned: unknown): TaskResult {
  const result: TaskResult = {
    kind: "writes",
    taskId: task.id,
    node: task.node,
    writes: [],
    gotos: [],
    sends: [],
  };
  let update: unknown = returned;
  if (isCommand(returned)) {
    update = returned.update;
    for (const target of returned.goto) {
      if (isSend(target)) result.sends.push({ node: target.node, arg: target.arg });
      else result.gotos.push(target);
    }
  }
  if (update === undefined || update === null) return result;
  if (typeof update !== "object" || Array.isArray(update))
    throw new InvalidUpdateError(
      `Node "${task.node}" returned ${Array.isArray(update) ? "an array" : typeof update}; return an object of channel updates, a Command, or nothing.`,
      {
        node: task.node,
      },
    );
  for (const [channel, value] of Object.entries(update)) {
    if (value === undefined) continue;
    if (!(channel in definition.schema))
      throw new InvalidUpdateError(
        `Node "${task.node}" wrote to unknown channel "${channel}"; the state has ${Object.keys(definition.schema).join(", ")}.`,
        {
          node: task.node,
          channel,
        },
      );
    result.writes.push([channel, value]);
  }
  return result;
}

function checkStorable(exec: Execution, result: TaskResult): void {
  if (result.kind !== "writes") return;
  for (const [channel, value] of result.writes)
    assertStorable(exec.serializer, value, `update.${channel}`);
  result.sends.forEach((send, i) =>
    assertStorable(exec.serializer, send.arg, `Send(${JSON.stringify(send.node)})[${i}].arg`),
  );
}

function retryable(policy: RetryPolicy | undefined, error: unknown): boolean {
  if (!policy) return false;
  if (policy.retryOn) return policy.retryOn(error);
  return !ReinError.is(error);
}

function backoff(policy: RetryPolicy | undefined, attempt: number): number {
  const initial = policy?.initialIntervalMs ?? 100;
  const factor = policy?.backoffFactor ?? 2;
  const max = policy?.maxIntervalMs ?? 10_000;
  return Math.min(max, initial * factor ** (attempt - 1));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
