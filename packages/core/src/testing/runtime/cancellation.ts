/**
 * Contracts of cancellation (SPEC §1): a run whose signal was aborted ends `cancelled` whatever
 * its node code does afterwards — rejects with an `AbortError` (as every client library does on
 * abort), throws another error, returns, or even asks for an interrupt — with the last
 * checkpoint intact and nothing recorded after the abort, so the thread continues from there.
 */
import { it, expect } from "vitest";
import {
  append,
  END,
  START,
  StateGraph,
  type CheckpointId,
  type Checkpointer,
  type TaskContext,
  type ThreadId,
} from "../../index.ts";
import { ROOT_STREAM } from "../../keys.ts";
import { threadName, type RuntimeEnv } from "./harness.ts";

/** What a node does once the run's signal has fired (`plain`: no abort, it just returns). */
type AfterAbort = "abort-error" | "other-error" | "resolve" | "interrupt";

const behaviours: readonly [AfterAbort, string][] = [
  ["abort-error", "rejects with an AbortError"],
  ["other-error", "throws another error"],
  ["resolve", "returns its writes"],
  ["interrupt", "asks for an interrupt"],
];

/** Waits for the run's signal, as a client library does, then behaves as `after` says. */
async function afterAbort(after: AfterAbort, ctx: TaskContext, name: string) {
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) resolve();
    else ctx.signal.addEventListener("abort", () => resolve(), { once: true });
  });
  if (after === "abort-error") throw new DOMException("This operation was aborted", "AbortError");
  if (after === "other-error") throw new Error(`${name}: the connection was reset`);
  if (after === "interrupt") ctx.interrupt({ question: `${name} after the abort?` });
  return { log: `${name} ran` };
}

/**
 * `prepare`, then a step of `width` parallel tasks (one task: its commit is its record; several:
 * each finished task is stored on its own). With a controller, the first task aborts the run and
 * every task then behaves as `after` says; without one, they just return.
 */
function cancelGraph(
  saver: Checkpointer,
  width: number,
  abort?: { controller: AbortController; after: AfterAbort },
) {
  const names = Array.from({ length: width }, (_, i) => `work${i}`);
  let graph = new StateGraph({ log: append<string>() }).addNode("prepare", () => ({
    log: "prepared",
  }));
  for (const name of names)
    graph = graph.addNode(name, (_s, ctx) => {
      if (!abort) return { log: `${name} ran` };
      if (name === "work0") abort.controller.abort("the user pressed stop");
      return afterAbort(abort.after, ctx, name);
    });
  graph = graph.addEdge(START, "prepare");
  for (const name of names) graph = graph.addEdge("prepare", name).addEdge(name, END);
  return graph.compile({ checkpointer: saver, name: `cancel-${width}` });
}

/** What the store holds for a thread: checkpoints, task results of the head, interrupts, runs. */
async function recorded(saver: Checkpointer, threadId: string, headId: string) {
  const id = threadId as ThreadId;
  const [checkpoints, results, interrupts, runs] = await Promise.all([
    saver.listCheckpoints(id, ROOT_STREAM, { limit: 100 }),
    saver.getTaskResults(id, ROOT_STREAM, headId as CheckpointId),
    saver.getThreadInterrupts(id),
    saver.listRuns(id),
  ]);
  return { checkpoints: checkpoints.length, results, interrupts, runs };
}

/** Contracts of a run whose signal was aborted. */
export function cancellationContracts(env: RuntimeEnv): void {
  for (const width of [1, 2])
    for (const [after, what] of behaviours)
      it(
        `an aborted run ends cancelled when ${width === 1 ? "its node" : "each of its parallel nodes"} ${what} afterwards, recording nothing after the abort`,
        env.withStore(async (saver) => {
          const threadId = threadName(`cancel-${after}-${width}`);
          const controller = new AbortController();
          const graph = cancelGraph(saver, width, { controller, after });
          const result = await graph.invoke(
            { log: "start" },
            { threadId, signal: controller.signal },
          );
          expect(result.status).toBe("cancelled");

          // The last checkpoint is the one before the aborted step, whole.
          const state = await graph.getState({ threadId });
          const names = Array.from({ length: width }, (_, i) => `work${i}`);
          expect(state.values.log).toEqual(["start", "prepared"]);
          expect(state.next.toSorted()).toEqual(names);
          expect(result.checkpointId).toBe(state.checkpointId);
          // Nothing after the abort: no task result, no interrupt, one run row, cancelled.
          const store = await recorded(saver, threadId, state.checkpointId as string);
          expect(store.results).toEqual([]);
          expect(store.interrupts).toEqual([]);
          expect(store.runs.map((r) => [r.status, r.error ?? null])).toEqual([["cancelled", null]]);

          // Continuing the thread runs the aborted step from that checkpoint, every task once.
          const done = await cancelGraph(saver, width).invoke(null, { threadId });
          expect(done.status).toBe("done");
          expect(done.values.log.toSorted()).toEqual(
            ["start", "prepared", ...names.map((n) => `${n} ran`)].toSorted(),
          );
          const later = await recorded(saver, threadId, state.checkpointId as string);
          expect(later.checkpoints).toBe(store.checkpoints + 1);
        }),
      );
}
