/**
 * What the Slack notifier remembers, in side records of the question's thread (first write wins
 * on every store, and the records leave with the thread): the message each event posted
 * (so an event delivered twice posts once) and the messages of each question, in the order
 * posted (the answer updates them all). And the question's current state, read from the store, for rendering.
 */
import { payloadDigest, type RuntimeStore } from "@rein/core";
import { TIMER_ACTOR } from "@rein/core/store";
import {
  readSlot,
  SIDE_KINDS,
  writeSlot,
  type SlotStore,
  type ThreadSlot,
} from "../side-records.ts";
import type { QuestionView } from "./slack-message.ts";
import { interruptIdOf } from "../ids.ts";

/**
 * The slot of one of Slack's records about a thread. Thread ids are unique across tenants, so
 * the records are kept without one.
 */
function slot(threadId: string, key: string): ThreadSlot {
  return { tenant: null, kind: SIDE_KINDS.slack, threadId, key };
}

/** A posted message: where it is. */
export interface MessageRef {
  channel: string;
  ts: string;
}

function asRef(stored: { value: unknown } | undefined): MessageRef | null {
  const value = stored?.value as Partial<MessageRef> | undefined;
  return typeof value?.channel === "string" && typeof value.ts === "string"
    ? { channel: value.channel, ts: value.ts }
    : null;
}

/** The message an event posted, if it did. */
export async function postedFor(
  store: SlotStore,
  threadId: string,
  eventId: string,
): Promise<MessageRef | null> {
  return asRef(await readSlot(store, slot(threadId, `event:${eventId}`)));
}

/** Records that an event is done with, pointing at a message posted before (nothing new). */
export async function markPosted(
  store: SlotStore,
  threadId: string,
  eventId: string,
  ref: MessageRef,
): Promise<void> {
  await writeSlot(store, slot(threadId, `event:${eventId}`), ref);
}

/** The most messages one question keeps track of (its first, then reminders and escalations). */
const MAX_MESSAGES = 20;

const messageKey = (interruptId: string, n: number) => `interrupt:${interruptId}:${n}`;

/** The first message posted for a question, if any. */
export async function messageOf(
  store: SlotStore,
  threadId: string,
  interruptId: string,
): Promise<MessageRef | null> {
  return asRef(await readSlot(store, slot(threadId, messageKey(interruptId, 0))));
}

/** Every message posted for a question, first first (reminders and escalations post more). */
export async function messagesOf(
  store: SlotStore,
  threadId: string,
  interruptId: string,
): Promise<MessageRef[]> {
  const refs: MessageRef[] = [];
  for (let n = 0; n < MAX_MESSAGES; n += 1) {
    const ref = asRef(await readSlot(store, slot(threadId, messageKey(interruptId, n))));
    if (!ref) break;
    refs.push(ref);
  }
  return refs;
}

/**
 * Records the message an event posted, then lists it under its question in the first free
 * numbered slot (first write wins per slot, so two processes recording at once take two slots).
 */
export async function recordPosted(
  store: SlotStore,
  threadId: string,
  eventId: string,
  interruptId: string,
  ref: MessageRef,
): Promise<void> {
  await writeSlot(store, slot(threadId, `event:${eventId}`), ref);
  for (let n = 0; n < MAX_MESSAGES; n += 1) {
    const stored = asRef(await writeSlot(store, slot(threadId, messageKey(interruptId, n)), ref));
    if (stored?.channel === ref.channel && stored.ts === ref.ts) return;
  }
}

/** What an event said about a question, for when its row is gone (its thread was deleted). */
export interface EventFacts {
  interruptId: string;
  threadId: string;
  graph: string;
  node: string;
  payload: unknown;
  status: string;
  actor: string | null;
  decision: unknown;
}

/**
 * The question's state now: its row in the store (the truth, even when an event arrives late),
 * else what the event said; `null` when neither knows it.
 */
export async function questionView(
  store: RuntimeStore,
  interruptId: string,
  facts: EventFacts | null,
): Promise<QuestionView | null> {
  const [row] = await store.getInterrupts([interruptIdOf(interruptId)]);
  if (!row) {
    if (!facts) return null;
    return {
      ...facts,
      digest: payloadDigest(facts.payload),
      required: 1,
      approvals: [],
    };
  }
  const actor = row.answeredBy ?? facts?.actor ?? null;
  const expired = row.status === "answered" && actor === TIMER_ACTOR;
  return {
    interruptId: row.id,
    threadId: row.threadId,
    graph: row.graph,
    node: row.node,
    payload: row.payload,
    digest: payloadDigest(row.payload),
    status: expired ? "expired" : row.status,
    required: row.policy?.count ?? 1,
    approvals: (row.approvals?.approvals ?? []).map((a) => a.actor),
    actor,
    decision: row.status === "answered" ? (row.answer ?? null) : null,
  };
}
