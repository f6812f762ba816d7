/**
 * Contracts of the approval queue: `listInterrupts` pages pending questions across threads, each
 * with its run-tree path and sub-agent id.
 */
import { it, expect } from "vitest";
import {} from "../../index.ts";
import { orchestrator } from "./graphs.ts";
import { Counter, threadName, type RuntimeEnv } from "./harness.ts";

/** Contracts of the interrupt queue. */
export function queueContracts(env: RuntimeEnv): void {
  it(
    "listInterrupts serves the queue across threads with run-tree paths, sub-agent ids and cursors",
    env.withStore(async (saver) => {
      const graph = orchestrator(saver, new Counter());
      const threads = [threadName("q1"), threadName("q2")];
      for (const threadId of threads) await graph.invoke({ tasks: ["a", "b"] }, { threadId });
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Awaited<ReturnType<typeof graph.listInterrupts>> = await graph.listInterrupts({
          status: "pending",
          limit: 3,
          cursor,
        });
        for (const item of page.items) {
          seen.push(item.id);
          expect(item.path, `item ${item.id}`).toHaveLength(2);
          expect(item.path[0], `item ${item.id}`).toMatchObject({
            graph: "supervisor",
            node: "agent",
          });
          expect(item.path[1], `item ${item.id}`).toMatchObject({
            runId: item.runId,
            graph: "research_agent",
            node: "approve",
            taskId: item.taskId,
          });
          expect(item.subAgentId, `item ${item.id}`).toBe(`research_agent:${item.runId}`);
          expect(item.ageMs, `item ${item.id}`).toBeGreaterThanOrEqual(0);
          expect(item.checkpointId, `item ${item.id}`).toBeTruthy();
        }
        cursor = page.nextCursor;
      } while (cursor);
      expect(seen).toHaveLength(4);
      expect(new Set(seen).size).toBe(4);
      const one = await graph.listInterrupts({ threadId: threads[0] as string });
      expect(one.items).toHaveLength(2);
    }),
  );
}
