/**
 * The free `interrupt()`: node code (or a helper it calls) asks a person without holding `ctx`.
 * The engine runs each node with its task as the asking task; this module only finds it.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { InvalidInputError } from "../errors.ts";
import type { InterruptOptions, TaskContext } from "../graph/node.ts";

/** What the free `interrupt()` needs of the running task: its `ctx.interrupt`. */
export type AskingTask = Pick<TaskContext, "interrupt">;

const storage = new AsyncLocalStorage<AskingTask>();

/** Runs `fn` with `task` as the asking task (found by the free `interrupt()`). */
export function withAskingTask<T>(task: AskingTask, fn: () => T): T {
  return storage.run(task, fn);
}

/** The asking task of the running node, if any. */
export function askingTask(): AskingTask | undefined {
  return storage.getStore();
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
