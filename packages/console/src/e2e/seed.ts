/**
 * A queue of any size for the browser tests: pending questions written straight into the store
 * (the conformance suite's record builders), each thread a real thread record.
 */
import type { Checkpointer } from "@rein/core";
import {
  checkpointId,
  makeInterrupt,
  makeOutcome,
  pausedResult,
  runId as testRunId,
  taskId as testTaskId,
  threadId as brandThread,
} from "@rein/core/testing";

/**
 * `count` pending questions of tenant acme in the store, as many threads of 100 (each thread a
 * real thread record of the demo's graph), newest last: what a queue of any size is tested with.
 */
export async function seedPending(store: Checkpointer, count: number): Promise<void> {
  const perThread = 100;
  for (let t = 0; t * perThread < count; t++) {
    const threadId = `bulk-${String(t).padStart(3, "0")}`;
    const at = new Date(Date.UTC(2026, 0, 1, 0, 0, t)).toISOString();
    await store.putThread({
      threadId: brandThread(threadId),
      tenant: "acme",
      metadata: {},
      graph: "question",
      createdAt: at,
      updatedAt: at,
    });
    const interrupts = Array.from({ length: Math.min(perThread, count - t * perThread) }, (_, i) =>
      makeInterrupt(threadId, `bulk-${t}-${i}`, {
        tenant: "acme",
        graph: "question",
        node: "ask",
        taskId: testTaskId(`task-${i}`),
        payload: { question: `Approve bulk item ${t * perThread + i + 1}?` },
        createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, t, i)).toISOString(),
        path: [
          {
            runId: testRunId("run-1"),
            graph: "question",
            node: "ask",
            taskId: testTaskId(`task-${i}`),
          },
        ],
      }),
    );
    await store.putTaskOutcome(
      makeOutcome(threadId, checkpointId(1), pausedResult("task-0"), { interrupts }),
    );
  }
}
