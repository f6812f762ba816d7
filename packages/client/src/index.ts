/**
 * `@rein/client` — a typed client of Rein's HTTP API for browsers and Node: threads, runs, the
 * approval queue, answers (one or in bulk), steering and audit, with SSE streams as async iterables. It uses
 * `fetch` only and imports nothing from Node.
 *
 * @example
 * const rein = new ReinClient({ baseUrl: "http://127.0.0.1:8080", token });
 * const { items } = await rein.listInterrupts({ status: "pending" });
 * const first = items[0];
 * if (first) await rein.resume(first.threadId, { target: { runId: first.runId, namespace: first.namespace }, resume: { type: "accept" } });
 *
 * @packageDocumentation
 */
export {
  BulkRefusedApiError,
  NotAllowedApiError,
  ReinApiError,
  ReinClient,
  apiErrorOf,
  clientRoutes,
} from "./client.ts";
export type { ReinClientOptions } from "./client.ts";
export { readSseFrames } from "./sse.ts";
export type { SseFrame } from "./sse.ts";
export type * from "./types.ts";
