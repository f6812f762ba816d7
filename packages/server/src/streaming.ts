/**
 * Piping a run's hub to an SSE response: replay after `Last-Event-ID`, stream-mode filtering,
 * and closing when the run ends or the client leaves.
 */
import type { FastifyReply } from "fastify";
import type { ServerContext } from "./context.ts";
import type { RunHub } from "./hub.ts";
import { openSse, type SseStream } from "./sse.ts";

/** Event names always delivered whatever the stream modes. */
const ALWAYS = new Set(["interrupt", "end", "error", "run"]);

/** Opens an SSE response tracked for shutdown. */
export function openTrackedSse(
  ctx: ServerContext,
  reply: FastifyReply,
  headers: Record<string, string> = {},
  onClose?: () => void,
): SseStream {
  const stream: SseStream = openSse(reply, {
    pingMs: ctx.pingMs,
    headers,
    onClose: () => {
      ctx.streams.delete(stream);
      onClose?.();
    },
  });
  ctx.streams.add(stream);
  return stream;
}

/** The `Last-Event-ID` as a number (0 when absent or not a number). */
export function lastEventId(header: string | string[] | undefined): number {
  const value = Number(Array.isArray(header) ? header[0] : header);
  return Number.isSafeInteger(value) && value > 0 ? value : 0;
}

/** Streams a hub's events after `afterId` to the reply until the run ends or the client leaves. */
export async function pipeHub(
  ctx: ServerContext,
  reply: FastifyReply,
  hub: RunHub,
  modes: ReadonlySet<string>,
  afterId: number,
): Promise<void> {
  let unsubscribe: () => void = () => undefined;
  const stream = openTrackedSse(ctx, reply, { "x-rein-run-id": hub.runId }, () => unsubscribe());
  if (afterId === 0) stream.send("run", { threadId: hub.threadId, runId: hub.runId }, 0);
  unsubscribe = hub.subscribe(afterId, (event) => {
    if (event === null) {
      stream.close();
      return;
    }
    if (ALWAYS.has(event.event) || modes.has(event.event))
      stream.send(event.event, event.data, event.id);
  });
  await stream.done;
}
