/**
 * The body of a webhook: `{ type, timestamp, data }` (the Standard Webhooks convention), built
 * from the outbox row alone so every attempt sends the same bytes.
 */
import type { InterruptId, RunId, RunRecord, Serializer, ThreadId } from "@rein/core";
import type { OutboxEvent, StoredInterrupt, WebhookEventType } from "@rein/core/store";

/** Largest question payload a webhook carries whole (JSON bytes); a larger one is left out. */
export const MAX_PAYLOAD_BYTES = 16 * 1024;

/** One step of the run-tree path of an interrupt, root first. */
export interface WebhookPathEntry {
  graph: string;
  node: string;
}

/** `data` of an `interrupt.*` event. */
export interface InterruptEventData {
  threadId: ThreadId;
  runId: RunId;
  interruptId: InterruptId;
  /** The graph that asked (a sub-agent's, in a run tree). */
  graph: string;
  /** The root graph of the run tree: the app. */
  rootGraph: string;
  tenant: string | null;
  /** The interrupt's status after the change. */
  status: string;
  node: string;
  /** The question (`interrupt(payload)`), when its JSON is at most 16 KiB; else `null`. */
  payload: unknown;
  /** Whether `payload` was left out for its size (read it with `GET /interrupts/:id`). */
  payloadOmitted: boolean;
  /** Run-tree path of the asking task, root first. */
  path: WebhookPathEntry[];
  deadline: string | null;
  createdAt: string;
  /** Who answered (`interrupt.answered`, and `system:timer` for `interrupt.expired`). */
  actor: string | null;
  /** The answer (`interrupt.answered`, or the `onTimeout` value of `interrupt.expired`). */
  decision: unknown;
}

/** `data` of a `run.finished` event. */
export interface RunEventData {
  threadId: ThreadId;
  runId: RunId;
  graph: string | null;
  rootGraph: string | null;
  tenant: string | null;
  /** `done`, `error` or `cancelled`. */
  status: string;
  error: RunRecord["error"] | null;
}

/** A webhook's JSON body. */
export interface WebhookBody {
  type: WebhookEventType;
  /** When the change committed (ISO). */
  timestamp: string;
  data: InterruptEventData | RunEventData;
}

function interruptData(event: OutboxEvent, serializer: Serializer): InterruptEventData {
  const record = serializer.deserialize(event.record) as StoredInterrupt;
  const json = JSON.stringify(record.payload ?? null);
  const fits = Buffer.byteLength(json) <= MAX_PAYLOAD_BYTES;
  return {
    threadId: record.threadId,
    runId: record.runId,
    interruptId: record.id,
    graph: record.graph,
    rootGraph: event.rootGraph ?? record.graph,
    tenant: event.tenant,
    status: event.status,
    node: record.node,
    payload: fits ? (record.payload ?? null) : null,
    payloadOmitted: !fits,
    path: (record.path ?? []).map((entry) => ({ graph: entry.graph, node: entry.node })),
    deadline: record.deadline ?? null,
    createdAt: record.createdAt,
    actor: event.actor,
    decision: event.answer === null ? null : serializer.deserialize(event.answer),
  };
}

function runData(event: OutboxEvent, serializer: Serializer): RunEventData {
  const record = serializer.deserialize(event.record) as RunRecord;
  return {
    threadId: record.threadId,
    runId: record.runId,
    graph: record.graph,
    rootGraph: record.graph,
    tenant: event.tenant,
    status: record.status,
    error: record.error ?? null,
  };
}

/** The JSON text of `event`'s webhook body. */
export function webhookBody(event: OutboxEvent, serializer: Serializer): string {
  const body: WebhookBody = {
    type: event.type,
    timestamp: event.createdAt,
    data:
      event.type === "run.finished" ? runData(event, serializer) : interruptData(event, serializer),
  };
  return JSON.stringify(body);
}
