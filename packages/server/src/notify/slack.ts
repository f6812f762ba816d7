/**
 * The Slack notifier: a subscription to `notify:slack` posts each pending question to a channel
 * with Approve / Reject / Open buttons, and updates that message when the question is answered,
 * expires or is cancelled. Fed by the webhook outbox, so it inherits its guarantees: at least
 * once per event, retried with backoff, dead-lettered after the last attempt.
 */
import type { RuntimeStore, SideRecordStore, WebhookEventType } from "@rein/core/store";
import type { InterruptEventData } from "../webhooks/payload.ts";
import type { Notifier, NotifierDelivery } from "./notifier.ts";
import { SlackApi } from "./slack-api.ts";
import { SLACK_API_URL, type SlackOptions } from "./slack-config.ts";
import { renderMessage } from "./slack-message.ts";
import {
  markPosted,
  messageOf,
  messagesOf,
  postedFor,
  questionView,
  recordPosted,
  type EventFacts,
} from "./slack-state.ts";

/** Options of {@link createSlackNotifier}: the Slack settings and the store it remembers in. */
export interface SlackNotifierOptions extends Pick<
  SlackOptions,
  "botToken" | "channel" | "apiUrl" | "publicUrl"
> {
  /** The server's store: messages are remembered in its once-slots, questions read from it. */
  store: RuntimeStore & SideRecordStore;
}

/** Events that post a message: the question, and each step of its escalation ladder. */
const POSTING = new Set<WebhookEventType>([
  "interrupt.pending",
  "interrupt.reminded",
  "interrupt.escalated",
]);
/** Events that close a question: its message is updated and loses its buttons. */
const CLOSING = new Set<WebhookEventType>([
  "interrupt.answered",
  "interrupt.expired",
  "interrupt.cancelled",
]);

function factsOf(data: InterruptEventData): EventFacts {
  return {
    interruptId: data.interruptId,
    threadId: data.threadId,
    graph: data.graph,
    node: data.node,
    payload: data.payload,
    status: data.status,
    actor: data.actor,
    decision: data.decision,
  };
}

/**
 * A {@link Notifier} of kind `slack`.
 *
 * Posting is deduplicated by event id: the message an event posted is recorded in the store
 * after Slack accepts it, and a redelivery of that event finds it and posts nothing. (A process
 * that dies between Slack's answer and that record can post one event twice: Slack's
 * `chat.postMessage` has no idempotency key to close that gap.)
 *
 * @example
 * const slack = createSlackNotifier({ botToken, channel: "C0123", store });
 * await slack.send({ id: "msg_1", attempt: 1, body });
 */
export function createSlackNotifier(options: SlackNotifierOptions): Notifier {
  const api = new SlackApi(options.apiUrl ?? SLACK_API_URL, options.botToken);
  const { store } = options;

  async function post(delivery: NotifierDelivery, data: InterruptEventData): Promise<void> {
    if (await postedFor(store, data.threadId, delivery.id)) return;
    const type = delivery.body.type;
    // A second `pending` of a question already posted (a re-raise) adds no message.
    const first = await messageOf(store, data.threadId, data.interruptId);
    if (first && type === "interrupt.pending") {
      await markPosted(store, data.threadId, delivery.id, first);
      return;
    }
    const view = await questionView(store, data.interruptId, factsOf(data));
    if (!view) return;
    if (type === "interrupt.reminded") view.notice = "reminded";
    if (type === "interrupt.escalated") view.notice = "escalated";
    const posted = await api.postMessage(options.channel, renderMessage(view, options.publicUrl));
    await recordPosted(store, data.threadId, delivery.id, data.interruptId, posted);
  }

  async function close(data: InterruptEventData): Promise<void> {
    // None: never posted (its `pending` event was dead-lettered, or came before the subscription).
    const messages = await messagesOf(store, data.threadId, data.interruptId);
    const view =
      messages.length > 0 ? await questionView(store, data.interruptId, factsOf(data)) : null;
    if (!view) return;
    // Updating is idempotent: a redelivery writes the same messages again. Reminders and
    // escalations lose their buttons too.
    const message = renderMessage(view, options.publicUrl);
    for (const ref of messages) await api.update(ref.channel, ref.ts, message);
  }

  return {
    kind: "slack",
    async send(delivery: NotifierDelivery): Promise<void> {
      const type = delivery.body.type;
      if (!type.startsWith("interrupt.")) return;
      const data = delivery.body.data as InterruptEventData;
      if (POSTING.has(type)) await post(delivery, data);
      else if (CLOSING.has(type)) await close(data);
    },
  };
}
