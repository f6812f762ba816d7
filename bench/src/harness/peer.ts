/**
 * Small adapters over LangGraph.js's documented API, shared by the scenarios.
 */
import { INTERRUPT, isInterrupted, type Interrupt } from "@langchain/langgraph";

/** The interrupts a LangGraph.js `invoke` result carries (`values.__interrupt__`), or none. */
export function peerInterrupts<Value>(values: unknown): Interrupt<Value>[] {
  return isInterrupted<Value>(values) ? values[INTERRUPT] : [];
}

/** The `config` addressing a LangGraph.js thread. */
export function peerThread(threadId: string): { configurable: { thread_id: string } } {
  return { configurable: { thread_id: threadId } };
}
