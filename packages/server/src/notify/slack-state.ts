/**
 * What the Slack notifier remembers, in the store's once-slots of the question's thread (first
 * write wins on every store, and the slots leave with the thread): the message each event posted
 * (so an event delivered twice posts once) and the first message of each question (the one the
 * answer updates). And the question's current state, read from the store, for rendering.
 */
import {
  payloadDigest,
  type Checkpointer,
  type InterruptId,
  type TaskId,
  type ThreadId,
} from "@rein/core";
import { TIMER_ACTOR } from "@rein/core/store";
import type { QuestionView } from "./slack-message.ts";

/**
 * The once-slot task of Slack's records: no task id of a graph has this form (they are `t_…`),
 * so no node's `once` can meet them.
 */
const SLACK_SLOTS = "notify:slack" as TaskId;

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
  store: Checkpointer,
  threadId: string,
  eventId: string,
): Promise<MessageRef | null> {
  return asRef(await store.getOnce(threadId as ThreadId, SLACK_SLOTS, `event:${eventId}`));
}

/** The first message posted for a question, if any. */
export async function messageOf(
  store: Checkpointer,
  threadId: string,
  interruptId: string,
): Promise<MessageRef | null> {
  return asRef(await store.getOnce(threadId as ThreadId, SLACK_SLOTS, `interrupt:${interruptId}`));
}

/** Records the message an event posted, and makes it the question's message if it is the first. */
export async function recordPosted(
  store: Checkpointer,
  threadId: string,
  eventId: string,
  interruptId: string,
  ref: MessageRef,
): Promise<void> {
  const thread = threadId as ThreadId;
  await store.putOnce(thread, SLACK_SLOTS, `event:${eventId}`, ref);
  await store.putOnce(thread, SLACK_SLOTS, `interrupt:${interruptId}`, ref);
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
  store: Checkpointer,
  interruptId: string,
  facts: EventFacts | null,
): Promise<QuestionView | null> {
  const [row] = await store.getInterrupts([interruptId as InterruptId]);
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
