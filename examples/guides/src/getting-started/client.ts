import { ReinClient } from "@rein/client";

const rein = new ReinClient({
  baseUrl: process.env["REIN_URL"] ?? "http://127.0.0.1:8080",
  token: process.env["REIN_TOKEN"],
});
const { threadId } = await rein.createThread({ graph: "support" });
const asked = await rein.startRun(threadId, {
  input: { messages: [{ role: "user", content: "Order 1042 arrived broken." }] },
  wait: true,
});
console.log(asked.status, asked.interrupts.length, "approval asked");

// A reviewer lowers the amount and leaves a note the model reads on its next turn.
const done = await rein.resume(threadId, {
  resume: { type: "edit", args: { orderId: "1042", amount: 40 } },
  steering: "Only one of the two mugs broke.",
});
const messages = (done.values as { messages: { role: string; content: unknown }[] }).messages;
console.log(done.status, messages.at(-1)?.content);
