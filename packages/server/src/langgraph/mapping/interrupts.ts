/**
 * Rein's interrupts in the protocol's shape: `{ id, value, namespace }`, listed under
 * `__interrupt__` in `values` events and wait results, and in `thread.interrupts` keyed by the
 * id of the root task that is paused (a sub-agent's question is keyed by the parent task running
 * the sub-agent, as LangGraph keys a subgraph's interrupt).
 */
import type { Interrupt } from "@rein/core";
import { approvalValueOf } from "./approvals.ts";

/** An interrupt as the SDK reads it (`Interrupt` in `@langchain/langgraph-sdk`'s schema). */
export interface LgInterrupt {
  /** Rein's interrupt id: the key of a map resume (`command.resume = { [id]: value }`). */
  id: string;
  /** The payload, with a tool-approval payload also in the shapes LangGraph UIs render. */
  value: unknown;
  /** The namespace of the asking task (`[]` at the root). */
  namespace: string[];
  when: "during";
  resumable: true;
}

/** One pending interrupt in the protocol's shape. */
export function lgInterrupt(interrupt: Interrupt): LgInterrupt {
  return {
    id: interrupt.id,
    value: approvalValueOf(interrupt.payload),
    namespace: interrupt.namespace,
    when: "during",
    resumable: true,
  };
}

/** A root task of the head, as the key of `thread.interrupts`. */
export interface RootTask {
  id: string;
  node: string;
}

/**
 * The id of the root task an interrupt pauses: its own task at the root, the root task running
 * its sub-agent below (matched by the first namespace segment's node name).
 */
export function rootTaskOf(interrupt: Interrupt, rootTasks: readonly RootTask[]): string {
  const first = interrupt.namespace[0];
  if (first === undefined) return interrupt.taskId;
  const node = first.split(":")[0];
  return rootTasks.find((task) => task.node === node)?.id ?? interrupt.taskId;
}

/** `thread.interrupts`: pending interrupts keyed by the root task they pause. */
export function interruptsByTask(
  pending: readonly Interrupt[],
  rootTasks: readonly RootTask[],
): Record<string, LgInterrupt[]> {
  const out: Record<string, LgInterrupt[]> = {};
  for (const interrupt of pending)
    (out[rootTaskOf(interrupt, rootTasks)] ??= []).push(lgInterrupt(interrupt));
  return out;
}

/**
 * Values as a `values` event or a wait result carries them: with `__interrupt__` listing the
 * pending interrupts when the run paused (where LangGraph puts them), unchanged otherwise.
 */
export function valuesWithInterrupts(
  values: Record<string, unknown>,
  pending: readonly Interrupt[],
): Record<string, unknown> {
  return pending.length === 0 ? values : { ...values, __interrupt__: pending.map(lgInterrupt) };
}
