/**
 * Server-Sent Events on a raw Node response: headers set once, event names and ids without line
 * breaks, data as one JSON line, keep-alive comments, and always closed.
 */
import type { FastifyReply } from "fastify";
import { toWireJson } from "./wire.ts";

/** An open SSE response. */
export interface SseStream {
  /** Sends one event; no-op once closed. */
  send(event: string, data: unknown, id?: number | string): void;
  /** Ends the response (idempotent). */
  close(): void;
  /** True once closed by either side. */
  readonly closed: boolean;
  /** Resolves when the response is closed by either side. */
  readonly done: Promise<void>;
}

const clean = (text: string): string => text.replace(/[\r\n]/g, " ");

/**
 * Takes over the reply and opens an SSE stream with a comment ping every `pingMs`.
 * `onClose` runs once when the stream ends, whoever ends it.
 */
export function openSse(
  reply: FastifyReply,
  options: { pingMs: number; headers?: Record<string, string>; onClose?: () => void },
): SseStream {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    ...options.headers,
  });
  // Writes of one tick go out together (one syscall, not one per event): a run's events come in
  // bursts (a step's updates and values; the closing values and the end).
  let corked = false;
  const flush = (): void => {
    if (!corked) return;
    corked = false;
    res.uncork();
  };
  const write = (chunk: string): void => {
    if (!corked) {
      corked = true;
      res.cork();
      process.nextTick(flush);
    }
    res.write(chunk);
  };
  write(": connected\n\n");
  let closed = false;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const ping = setInterval(() => {
    if (!closed) write(": ping\n\n");
  }, options.pingMs);
  ping.unref();
  const finish = (): void => {
    if (closed) return;
    closed = true;
    clearInterval(ping);
    options.onClose?.();
    flush();
    if (!res.writableEnded) res.end();
    resolveDone();
  };
  res.on("close", finish);
  return {
    send(event, data, id) {
      if (closed) return;
      let frame = "";
      if (id !== undefined) frame += `id: ${clean(String(id))}\n`;
      frame += `event: ${clean(event)}\ndata: ${toWireJson(data)}\n\n`;
      write(frame);
    },
    close: finish,
    get closed() {
      return closed;
    },
    done,
  };
}
