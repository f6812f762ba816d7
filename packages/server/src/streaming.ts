/**
 * Piping a run's hub to an SSE response: replay after `Last-Event-ID`, stream-mode filtering,
 * and closing when the run ends or the client leaves.
 */
import type { FastifyReply } from "fastify";
import type { RunId } from "@rein/core";
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
 * Polls (one a second) of a finished run's row that ask again for its missing events before the
 * stream gives up on them and closes with the record: long enough for every listener to reopen
 * after a Postgres restart.
 */
const FINISHED_REPLAY_POLLS = 3;

/**
 * Streams the events of a run this process is not executing now: one queued (started later,
 * here or elsewhere), or executing in another process (its events come over LISTEN/NOTIFY). If
 * this process starts it, the stream switches to its hub. Events are delivered once each, in id
 * order: a gap in the ids, or a reconnect of the listener, asks the executor to replay what was
 * missed. The run's row is polled too, so a stream whose executor died without an `end` still
 * closes, with the run record.
 */
export async function pipeElsewhere(
  ctx: ServerContext,
  reply: FastifyReply,
  threadId: string,
  runId: RunId,
  modes: ReadonlySet<string>,
  afterId: number,
): Promise<void> {
  const stops: (() => void)[] = [];
  const stream = openTrackedSse(ctx, reply, { "x-rein-run-id": runId }, () => {
    for (const stop of stops.splice(0)) stop();
  });
  if (afterId === 0) stream.send("run", { threadId, runId }, 0);
  let last = afterId;
  /** A replay was asked for and nothing after `last` has come since: ask again on the next poll. */
  let awaitingReplay = false;
  const deliver = (event: { id: number; event: string; data: unknown }): void => {
    if (event.id <= last) return;
    last = event.id;
    awaitingReplay = false;
    if (ALWAYS.has(event.event) || modes.has(event.event))
      stream.send(event.event, event.data, event.id);
    if (event.event === "end" || event.event === "error") stream.close();
  };
  stops.push(
    ctx.runs.onStart(runId, (hub) => {
      for (const stop of stops.splice(0)) stop();
      stops.push(
        hub.subscribe(last, (event) => (event === null ? stream.close() : deliver(event))),
      );
    }),
  );
  const fanout = ctx.scale?.fanout;
  const replay = (): void => {
    if (!fanout) return;
    awaitingReplay = true;
    fanout.publish({ kind: "replay", runId, after: last });
  };
  if (fanout) {
    stops.push(
      fanout.subscribeRun(runId, (message) => {
        // A gap: some events were lost on the way (a failed NOTIFY); ask for them again.
        if (message.event.id > last + 1) replay();
        else deliver(message.event);
      }),
      fanout.onReconnect(replay),
    );
    // Events sent before this subscription (a join after the run started elsewhere).
    replay();
  }
  // A replay request is a notification too, and is lost if the executor's own listener is down
  // (a Postgres restart drops every listener; each reopens on its own schedule). So a request
  // nobody answered is repeated each poll, and a run that ended without its `end` reaching here
  // gets a few more polls of asking (the executor keeps a finished run's events for minutes)
  // before the stream closes with the run's record.
  let finishedPolls = 0;
  const poll = setInterval(() => {
    if (awaitingReplay) replay();
    void ctx.store.getRun(runId).then(
      (run) => {
        if (!run || run.status === "running" || run.status === "queued" || ctx.runs.hub(runId))
          return;
        finishedPolls += 1;
        if (fanout && finishedPolls <= FINISHED_REPLAY_POLLS) {
          replay();
          return;
        }
        const { options: _options, ...record } = run;
        stream.send("run", { threadId, runId, record });
        stream.close();
      },
      () => undefined,
    );
  }, 1000);
  poll.unref();
  stops.push(() => clearInterval(poll));
  await stream.done;
}
