/**
 * The approval queue's filters as a reviewer means them: the app (the root graph of the run tree)
 * lists every question of its tree, the sub-agent graph only the questions its runs ask, and a
 * count gives the size of the whole queue, whatever page is read.
 */
import { expect } from "vitest";
import type { Checkpointer, InterruptQuery, StoredInterrupt } from "../../checkpoint/types.ts";
import type { RunPathEntry } from "../../types.ts";
import {
  at,
  checkpointId,
  makeInterrupt,
  makeOutcome,
  pausedResult,
  runId,
  taskId,
} from "../fixtures.ts";
import type { SpecModule } from "../suite.ts";

/** A path entry of run `run` in graph `graph`. */
const entry = (run: string, graph: string, node: string): RunPathEntry => ({
  runId: runId(run),
  graph,
  node,
  taskId: taskId(`${run}-${node}`),
});

/**
 * An interrupt asked by `graph`'s run at the end of `path` (root first), as the runtime records
 * it: the last path entry is the asking task.
 */
function asked(thread: string, id: string, path: RunPathEntry[], over: Partial<StoredInterrupt>) {
  const self = path[path.length - 1] as RunPathEntry;
  return makeInterrupt(thread, id, {
    runId: self.runId,
    graph: self.graph,
    node: self.node,
    taskId: self.taskId,
    namespace: path.slice(1).map((p) => p.node),
    path,
    ...over,
  });
}

async function store(saver: Checkpointer, rows: StoredInterrupt[]): Promise<void> {
  for (const row of rows)
    await saver.putTaskOutcome(
      makeOutcome(row.threadId, checkpointId(1), pausedResult(row.taskId), {
        interrupts: [row],
      }),
    );
}

/** Two apps: the desk asks itself once and through two sub-agents; billing reuses one of them. */
function twoApps(): StoredInterrupt[] {
  const desk = entry("desk", "support-desk", "supervisor");
  const billing = entry("bill", "billing", "charge");
  return [
    asked("t1", "desk-dispatch", [desk], { createdAt: at(1) }),
    asked(
      "t1",
      "desk-refund",
      [entry("desk", "support-desk", "refund"), entry("r1", "refund_agent", "tools")],
      {
        createdAt: at(2),
      },
    ),
    asked(
      "t1",
      "desk-email",
      [entry("desk", "support-desk", "email"), entry("e1", "email_agent", "tools")],
      {
        createdAt: at(3),
      },
    ),
    asked("t2", "bill-root", [billing], { createdAt: at(4) }),
    asked("t2", "bill-refund", [billing, entry("r2", "refund_agent", "tools")], {
      createdAt: at(5),
    }),
    asked("t1", "desk-old", [desk], { createdAt: at(0), status: "answered", answer: true }),
  ];
}

async function ids(saver: Checkpointer, query: InterruptQuery): Promise<string[]> {
  const page = await saver.listInterrupts({ limit: 100, ...query });
  expect(page.nextCursor).toBeNull();
  return page.items.map((i) => i.id);
}

/** Specs of the queue's app and sub-agent filters and its count. */
export const queueFilterSpecs: SpecModule = {
  concern: "queue filters",
  register({ spec }) {
    spec(
      "the app filter lists every question of its run tree, sub-agents' included",
      async (saver) => {
        await store(saver, twoApps());
        expect(await ids(saver, { status: "pending", graph: "support-desk" })).toEqual([
          "desk-email",
          "desk-refund",
          "desk-dispatch",
        ]);
        expect(await ids(saver, { status: "pending", graph: "billing" })).toEqual([
          "bill-refund",
          "bill-root",
        ]);
        // A sub-agent's graph is not an app: nothing has it as its root.
        expect(await ids(saver, { graph: "refund_agent" })).toEqual([]);
      },
      ["interruptQueue"],
    );

    spec(
      "the sub-agent filter matches the graph of the run that asked, in any app",
      async (saver) => {
        await store(saver, twoApps());
        expect(await ids(saver, { status: "pending", subAgentGraph: "refund_agent" })).toEqual([
          "bill-refund",
          "desk-refund",
        ]);
        expect(
          await ids(saver, {
            status: "pending",
            graph: "support-desk",
            subAgentGraph: "refund_agent",
          }),
        ).toEqual(["desk-refund"]);
        // The root run's own questions have the app's graph as theirs.
        expect(await ids(saver, { status: "pending", subAgentGraph: "support-desk" })).toEqual([
          "desk-dispatch",
        ]);
      },
      ["interruptQueue"],
    );

    spec(
      "count gives the size of the whole filtered queue on every page",
      async (saver) => {
        await store(saver, twoApps());
        const first = await saver.listInterrupts({ status: "pending", limit: 2, count: true });
        expect(first.items).toHaveLength(2);
        expect(first.total).toBe(5);
        const second = await saver.listInterrupts({
          status: "pending",
          limit: 2,
          count: true,
          cursor: first.nextCursor,
        });
        expect(second.items.map((i) => i.id)).toEqual(["desk-email", "desk-refund"]);
        expect(second.total).toBe(5);
        const app = await saver.listInterrupts({
          status: "pending",
          graph: "support-desk",
          count: true,
        });
        expect(app.total).toBe(3);
        const every = await saver.listInterrupts({ graph: "support-desk", count: true });
        expect(every.total).toBe(4);
        const none = await saver.listInterrupts({
          status: "pending",
          graph: "nobody",
          count: true,
        });
        expect([none.items, none.total]).toEqual([[], 0]);
        // Not asked, not counted.
        expect((await saver.listInterrupts({ status: "pending" })).total).toBeUndefined();
      },
      ["interruptQueue"],
    );

    spec(
      "an answered question leaves the count and the app's queue",
      async (saver) => {
        await store(saver, twoApps());
        const refund = twoApps()[1] as StoredInterrupt;
        const outcome = await saver.answerInterrupts({
          threadId: refund.threadId,
          answers: [{ id: refund.id, value: { type: "accept" } }],
          wake: [],
          actor: "alice",
          action: "answer",
        });
        expect(outcome).toEqual({ ok: true });
        const page = await saver.listInterrupts({
          status: "pending",
          graph: "support-desk",
          count: true,
        });
        expect([page.items.map((i) => i.id), page.total]).toEqual([
          ["desk-email", "desk-dispatch"],
          2,
        ]);
      },
      ["interruptQueue"],
    );
  },
};
