import { ReinApiError, ReinClient } from "@rein/client";

const rein = new ReinClient({ baseUrl: process.env.REIN_URL!, token: process.env.REIN_TOKEN });
await rein.createThread({ graph: "desk", threadId: "ticket-7" });
await rein.startRun("ticket-7", { input: {}, wait: true }); // pauses at the desk's question

const { items } = await rein.listInterrupts({ status: "pending" });
const first = items[0]!;
try {
  const run = await rein.resume(
    first.threadId,
    { target: { runId: first.runId, namespace: first.namespace }, resume: { type: "accept" } },
    { idempotencyKey: crypto.randomUUID() },
  );
  console.log("resumed:", run.status, run.values);
} catch (error) {
  if (error instanceof ReinApiError && error.stale) console.log("re-decide:", error.details);
  else throw error;
}

// The live queue: the first page now, then again each time it changes, until the signal aborts.
const signal = AbortSignal.timeout(5_000);
for await (const page of rein.watchInterrupts({ graph: "desk" }, { signal })) {
  console.log("pending now:", page.items.length);
  break;
}
