/**
 * Mapping Rein's vocabulary onto the v2 protocol's: run statuses to agent statuses, pending
 * interrupts to `input.requested`, and core stream events to channel events. Pure functions and
 * one per-run translator that remembers what a run has announced.
 */
import type { Interrupt, RunStatus, StreamEvent } from "@rein/core";
import type { AgentStatus, EventMethod, Namespace } from "./protocol.ts";

/** One protocol event to emit, before the log numbers it. */
export interface Emission {
  method: EventMethod;
  namespace: Namespace;
  data: unknown;
  node?: string;
}

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

/** Whether two namespaces name the same agent (a dynamic `:suffix` on either side is ignored). */
export function sameNamespace(a: readonly string[], b: readonly string[]): boolean {
  const base = (s: string): string => s.split(":")[0] ?? s;
  return a.length === b.length && a.every((segment, i) => base(segment) === base(b[i] ?? ""));
}

/** A core `messages` delta, as far as this mapping reads it. */
type Delta = { type?: unknown; text?: unknown; id?: unknown };

/** One streamed model message in progress: which block is open. */
interface OpenMessage {
  namespace: Namespace;
  node: string;
  text: string;
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
  /** Whether a `values` event went out (a run that streamed none gets one at its end). */
  sawValues = false;
  private readonly messages = new Map<string, OpenMessage>();
  private messageSeq = 0;

  constructor(private readonly graphName: (namespace: Namespace) => string) {}

  /** The events one core event stands for. */
  translate(event: StreamEvent): Emission[] {
    const out = this.discover(event.namespace);
    switch (event.type) {
      case "values":
        this.sawValues = true;
        out.push({ method: "values", namespace: event.namespace, data: event.values });
        break;
      case "updates":
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
        if (event.phase === "end") out.push(...this.finishMessage(event.taskId));
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
        out.push(...this.messageDelta(event));
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
    return [...this.messages.keys()].flatMap((key) => this.finishMessage(key));
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

  private messageDelta(event: Extract<StreamEvent, { type: "messages" }>): Emission[] {
    const delta = (isRecord(event.delta) ? event.delta : {}) as Delta;
    if (delta.type !== "text" || typeof delta.text !== "string") return [];
    const out: Emission[] = [];
    let open = this.messages.get(event.taskId);
    if (!open) {
      open = { namespace: event.namespace, node: event.node, text: "" };
      this.messages.set(event.taskId, open);
      const id = `msg-${event.runId}-${event.taskId}-${++this.messageSeq}`;
      out.push(
        this.message(open, { event: "message-start", role: "ai", id }),
        this.message(open, {
          event: "content-block-start",
          index: 0,
          content: { type: "text", text: "" },
        }),
      );
    }
    open.text += delta.text;
    out.push(
      this.message(open, {
        event: "content-block-delta",
        index: 0,
        delta: { type: "text-delta", text: delta.text },
      }),
    );
    return out;
  }

  private finishMessage(taskId: string): Emission[] {
    const open = this.messages.get(taskId);
    if (!open) return [];
    this.messages.delete(taskId);
    return [
      this.message(open, {
        event: "content-block-finish",
        index: 0,
        content: { type: "text", text: open.text },
      }),
      this.message(open, { event: "message-finish" }),
    ];
  }

  private message(open: OpenMessage, data: Record<string, unknown>): Emission {
    return { method: "messages", namespace: open.namespace, node: open.node, data };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
