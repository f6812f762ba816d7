import type { Notifier } from "@rein/server";

// A notifier that posts each new question to a chat room's incoming-webhook URL. Subscribe it
// with the URL notify:chat-room and pass it to createServer({ notifiers: [chatRoom] }).
export const chatRoom: Notifier = {
  kind: "chat-room",
  async send({ id, attempt, body }) {
    if (body.type !== "interrupt.pending") return;
    const response = await fetch("https://chat.example.com/hooks/approvals", {
      method: "POST",
      // The same id on every attempt: the room can drop a repeat.
      headers: { "content-type": "application/json", "idempotency-key": id },
      body: JSON.stringify({ text: `Approval needed on ${body.data.threadId} (try ${attempt})` }),
    });
    // Throwing makes the delivery loop retry with its backoff, then dead-letter the event.
    if (!response.ok) throw new Error(`the chat room answered ${response.status}`);
  },
};
