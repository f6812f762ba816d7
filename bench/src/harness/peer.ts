/**
 * Small adapters over LangGraph.js's documented API, shared by the scenarios.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  INTERRUPT,
  isInterrupted,
  type BaseCheckpointSaver,
  type Interrupt,
} from "@langchain/langgraph";

/** The interrupts a LangGraph.js `invoke` result carries (`values.__interrupt__`), or none. */
export function peerInterrupts<Value>(values: unknown): Interrupt<Value>[] {
  return isInterrupted<Value>(values) ? values[INTERRUPT] : [];
}

/** The `config` addressing a LangGraph.js thread. */
export function peerThread(threadId: string): { configurable: { thread_id: string } } {
  return { configurable: { thread_id: threadId } };
}

/** A pending interrupt found by {@link peerScanPending}. */
export interface PeerPending<Value> {
  threadId: string;
  id: string;
  value: Value;
}

/**
 * The closest LangGraph.js offers to a cross-thread approval queue, which it does not have: page
 * through `checkpointer.list({})` newest first (`batch` rows at a time, with `before`), keep each
 * thread's newest checkpoint, and collect the `__interrupt__` writes pending on it until `limit`
 * interrupts are found.
 */
export async function peerScanPending<Value>(
  saver: BaseCheckpointSaver,
  limit: number,
  batch = 100,
): Promise<{ items: PeerPending<Value>[]; scanned: number }> {
  const seen = new Set<string>();
  const items: PeerPending<Value>[] = [];
  let before: RunnableConfig | undefined;
  let scanned = 0;
  for (;;) {
    let rows = 0;
    for await (const tuple of saver.list({}, { limit: batch, ...(before ? { before } : {}) })) {
      rows++;
      before = tuple.config;
      const threadId = String(tuple.config.configurable?.thread_id);
      if (seen.has(threadId)) continue;
      seen.add(threadId);
      for (const [, channel, written] of tuple.pendingWrites ?? []) {
        if (channel !== INTERRUPT) continue;
        for (const it of written as Interrupt<Value>[])
          items.push({ threadId, id: it.id ?? "", value: it.value as Value });
      }
      if (items.length >= limit) return { items: items.slice(0, limit), scanned: scanned + rows };
    }
    scanned += rows;
    if (rows < batch) return { items, scanned };
  }
}
