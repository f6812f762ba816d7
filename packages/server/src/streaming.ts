/**
 * Piping a run's hub to an SSE response: replay after `Last-Event-ID`, stream-mode filtering,
 * and closing when the run ends or the client leaves.
 */
import type { FastifyReply } from "fastify";
import type { RunId } from "@rein/core";
import type { ScaleOut } from "./scale/index.ts";
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

/**
 * Streams the events of a run executing in another process (received over LISTEN/NOTIFY) until
 * it ends. The run's status is also polled, so a stream whose executor died without an `end`
 * still closes, with the run record.
 */
export async function pipeRemote(
  ctx: ServerContext,
  scale: ScaleOut,
  reply: FastifyReply,
  threadId: string,
  runId: string,
  modes: ReadonlySet<string>,
  afterId: number,
): Promise<void> {
  let unsubscribe: () => void = () => undefined;
  let stopPolling: () => void = () => undefined;
  const stream = openTrackedSse(ctx, reply, { "x-rein-run-id": runId }, () => {
    unsubscribe();
    stopPolling();
  });
  if (afterId === 0) stream.send("run", { threadId, runId }, 0);
  unsubscribe = scale.fanout.subscribeRun(runId, (message) => {
    const event = message.event;
    if (event.id > afterId && (ALWAYS.has(event.event) || modes.has(event.event)))
      stream.send(event.event, event.data, event.id);
    if (message.done) stream.close();
  });
  const poll = setInterval(() => {
    void ctx.store.getRun(runId as RunId).then(
      (run) => {
        if (run && run.status !== "running") {
          const { options: _options, ...record } = run;
          // Give a late `end` notification a moment before closing with the record.
          setTimeout(() => {
            stream.send("run", { threadId, runId, record });
            stream.close();
          }, 500).unref();
        }
      },
      () => undefined,
    );
  }, 1000);
  poll.unref();
  stopPolling = () => clearInterval(poll);
  await stream.done;
}
