/**
 * Mapping Rein's vocabulary onto the v2 protocol's: run statuses to agent statuses, pending
 * interrupts to `input.requested`, and core stream events to channel events. Pure functions and
 * one per-run translator that remembers what a run has announced.
 */
import type { Interrupt, RunStatus, StreamEvent } from "@rein/core";
import { isRecord } from "../mapping/json.ts";
import { MessageChannel } from "./messages.ts";
import type { AgentStatus, Emission, Namespace } from "./protocol.ts";
import { ToolChannel } from "./tools.ts";

export type { Emission } from "./protocol.ts";

/**
 * The agent status of a Rein run: `queued` → `started`, `done` → `completed`, `error` and
 * `cancelled` → `failed` (the protocol has no cancelled status), `interrupted` → `interrupted`.
 * A run with pending interrupts of its own is `interrupted` whatever its row says, so a paused
 * child sub-agent reads as paused, not as running.
 */
export function agentStatusOf(status: RunStatus, pending: boolean): AgentStatus {
  if (pending) return "interrupted";
  switch (status) {
    case "queued":
      return "started";
    case "running":
      return "running";
    case "done":
      return "completed";
    case "interrupted":
      return "interrupted";
    case "error":
    case "cancelled":
      return "failed";
  }
}

/**
 * `input.requested` for a pending interrupt, at the interrupt's own namespace: the client keeps
 * `{ interruptId, payload, namespace }` and sends both back in `input.respond`.
 */
export function inputRequested(
  interrupt: Pick<Interrupt, "id" | "namespace" | "payload">,
): Emission {
  return {
    method: "input.requested",
    namespace: interrupt.namespace,
    data: { interrupt_id: interrupt.id, payload: interrupt.payload },
  };
}

/** A namespace segment without its dynamic suffix (`"agent:3f2a"` → `"agent"`), as clients match. */
export function baseSegment(segment: string): string {
  const cut = segment.indexOf(":");
  return cut === -1 ? segment : segment.slice(0, cut);
}

/** Whether two namespaces name the same agent (a dynamic `:suffix` on either side is ignored). */
export function sameNamespace(a: readonly string[], b: readonly string[]): boolean {
  return (
    a.length === b.length &&
    a.every((segment, i) => baseSegment(segment) === baseSegment(b[i] ?? ""))
  );
}

/**
 * Translates one run's core stream events into protocol events. Remembers the namespaces it has
 * seen (a sub-agent's first event announces it with a `lifecycle` `started`), the interrupts it
 * has announced (each once per run), and the model messages being streamed (text deltas become
 * `message-start`, `content-block-*` and `message-finish`).
 */
export class RunTranslator {
  /** Namespaces of sub-agents seen in this run, by key. */
  readonly namespaces = new Map<string, Namespace>();
  /** Interrupt ids announced by this run. */
  readonly announced = new Set<string>();
  /** Whether a `values` event went out, at any namespace. */
  sawValues = false;
  /**
   * Whether a root `values` event went out: a run that streamed none (a targeted answer while a
   * sibling is paused streams only its sub-agent's) gets the root's at its end.
   */
  sawRootValues = false;
  private readonly messages = new MessageChannel();
  private readonly tools = new ToolChannel();

  constructor(private readonly graphName: (namespace: Namespace) => string) {}

  /** The events one core event stands for. */
  translate(event: StreamEvent): Emission[] {
    const out = this.discover(event.namespace);
    switch (event.type) {
      case "values": {
        this.sawValues = true;
        if (event.namespace.length === 0) this.sawRootValues = true;
        const shown = this.messages.values(event.namespace, event.values);
        out.push(...shown.emissions);
        out.push({ method: "values", namespace: event.namespace, data: shown.values });
        break;
      }
      case "updates":
        this.messages.update(event.namespace, event.taskId, event.update);
        out.push(...this.tools.update(event.namespace, event.node, event.update));
        out.push({
          method: "updates",
          namespace: event.namespace,
          node: event.node,
          data: { node: event.node, values: isRecord(event.update) ? event.update : {} },
        });
        break;
      case "custom":
        out.push({
          method: "custom",
          namespace: event.namespace,
          node: event.node,
          data: { payload: event.data },
        });
        break;
      case "tasks":
        if (event.phase === "end") {
          out.push(...this.messages.taskEnded(event.taskId));
          if (event.outcome === "paused") out.push(...this.tools.paused(event.namespace));
        } else out.push(...this.tools.taskStarted(event.namespace, event.node));
        out.push({
          method: "tasks",
          namespace: event.namespace,
          node: event.node,
          data: {
            id: event.taskId,
            name: event.node,
            phase: event.phase,
            ...(event.outcome ? { outcome: event.outcome } : {}),
          },
        });
        break;
      case "checkpoints":
        out.push({
          method: "checkpoints",
          namespace: event.namespace,
          data: { id: event.checkpointId, step: event.step, source: "loop", next: event.next },
        });
        break;
      case "messages":
        out.push(...this.messages.delta(event));
        break;
      case "interrupt":
        if (!this.announced.has(event.interrupt.id)) {
          this.announced.add(event.interrupt.id);
          out.push(inputRequested(event.interrupt));
        }
        break;
      case "debug":
      case "end":
        break;
    }
    return out;
  }

  /** Closes every message still open (the run ended). */
  finishAll(): Emission[] {
    return this.messages.finishAll();
  }

  private discover(namespace: Namespace): Emission[] {
    if (namespace.length === 0) return [];
    const out: Emission[] = [];
    // Every level of a nested namespace is an agent of its own.
    for (let depth = 1; depth <= namespace.length; depth++) {
      const prefix = namespace.slice(0, depth);
      const key = prefix.join("\u0000");
      if (this.namespaces.has(key)) continue;
      this.namespaces.set(key, prefix);
      out.push({
        method: "lifecycle",
        namespace: prefix,
        data: { event: "started", graph_name: this.graphName(prefix) },
      });
    }
    return out;
  }
}
