/**
 * A run's protocol SSE stream: `metadata` first (`{ run_id, attempt }`), then the run's events
 * translated ({@link translateEvent}), each with the id of the Rein event it comes from (a
 * reconnect with `Last-Event-ID` resumes after it), keep-alive comments, and the run's closing
 * events. The response carries `Content-Location` (the run, as the SDK reads its id before the
 * first event) and `Location` (where the SDK reconnects).
 */
import type { FastifyReply } from "fastify";
import type { RunId, RunResult, StreamEvent, ThreadId } from "@rein/core";
import type { ServerContext } from "../context.ts";
import type { HubEvent, RunHub } from "../hub.ts";
import { openTrackedSse } from "../streaming.ts";
import type { SseStream } from "../sse.ts";
import { closingEvents, translateEvent, wantsTokens, type LgStreamOptions } from "./events.ts";
import { corsHeadersOf } from "./http.ts";
import { valuesWithInterrupts } from "./mapping/interrupts.ts";
import { messagesOut } from "./mapping/messages.ts";
import { TokenTuples } from "./tokens.ts";

/** The headers naming a run: its resource and its stream, relative to the protocol's base URL. */
export function runLocation(threadId: string, runId: string): Record<string, string> {
  return {
    "content-location": `/threads/${threadId}/runs/${runId}`,
    location: `/threads/${threadId}/runs/${runId}/stream`,
  };
}

/** Sends one hub event's protocol events; returns true when the run has ended. */
function relay(
  stream: SseStream,
  event: HubEvent,
  options: LgStreamOptions,
  tokens: TokenTuples | undefined,
): boolean {
  if (event.event === "error") {
    const data = event.data as { error?: string; message?: string };
    stream.send("error", { error: data.error ?? "error", message: data.message ?? "" }, event.id);
    return true;
  }
  const core = event.data as StreamEvent;
  const out =
    core.type === "end"
      ? closingEvents(core.result, options, tokens)
      : translateEvent(core, options, tokens);
  for (const each of out) stream.send(each.event, each.data, event.id);
  return core.type === "end";
}

/** Pipes a hub (replaying after `afterId`) until the run ends or the client leaves. */
function follow(
  stream: SseStream,
  hub: RunHub,
  options: LgStreamOptions,
  afterId: number,
): () => void {
  // The ids of streamed replies are this stream's: each stream keeps its own.
  const tokens = wantsTokens(options.modes) ? new TokenTuples() : undefined;
  return hub.subscribe(afterId, (event) => {
    if (event === null || relay(stream, event, options, tokens)) stream.close();
  });
}

/**
 * Streams a run: from this process's hub (now or once a queued run starts here); a run that ended
 * without a hub here (another process, or long ago) sends its thread's last values and closes.
 */
export async function pipeLgRun(
  ctx: ServerContext,
  reply: FastifyReply,
  threadId: ThreadId,
  runId: RunId,
  options: LgStreamOptions,
  afterId: number,
  finalValues: () => Promise<RunResult | null>,
): Promise<void> {
  const stops: (() => void)[] = [];
  const stream = openTrackedSse(
    ctx,
    reply,
    { ...corsHeadersOf(reply), ...runLocation(threadId, runId) },
    () => {
      for (const stop of stops.splice(0)) stop();
    },
  );
  if (afterId === 0) stream.send("metadata", { run_id: runId, attempt: 1 });
  const hub = ctx.runs.hub(runId);
  if (hub) {
    stops.push(follow(stream, hub, options, afterId));
  } else {
    stops.push(
      ctx.runs.onStart(runId, (started) => {
        for (const stop of stops.splice(0)) stop();
        stops.push(follow(stream, started, options, afterId));
      }),
    );
    const poll = setInterval(() => {
      void ctx.store.getRun(runId).then(
        async (run) => {
          if (!run || run.status === "queued" || run.status === "running" || ctx.runs.hub(runId))
            return;
          const result = await finalValues();
          if (result && options.modes.has("values"))
            stream.send(
              "values",
              valuesWithInterrupts(messagesOut(result.values), result.interrupts),
            );
          stream.close();
        },
        () => undefined,
      );
    }, 500);
    poll.unref();
    stops.push(() => clearInterval(poll));
  }
  await stream.done;
}
