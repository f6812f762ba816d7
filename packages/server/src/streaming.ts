/**
 * Piping a run's hub to an SSE response: replay after `Last-Event-ID`, stream-mode filtering,
 * and closing when the run ends or the client leaves.
 */
import type { FastifyReply } from "fastify";
import { EventsMissingError, type RunId } from "@rein/core";
import type { ServerContext } from "./context.ts";
import type { HubEvent, RunHub } from "./hub.ts";
import { AttemptCursor, wireId, type ResumePoint } from "./attempts.ts";
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
      stream.send(event.event, event.data, wireId(hub.attempt, event.id));
  });
  await stream.done;
}

/** Ends a joined stream with an `events_missing` error (what was lost, and what to do). */
function endMissing(stream: SseStream, threadId: string, runId: string, reason: string): void {
  stream.send("error", new EventsMissingError(threadId, runId, reason).toJSON());
  stream.close();
}

/** Why a stream ends when a later attempt of its run overtook the one it followed. */
const OVERTAKEN = "the run went on in a new attempt, and the rest of the earlier one never came";

/**
 * Polls (one a second) of a finished run's row that ask again for its missing events before the
 * stream gives up on them and closes with the record: long enough for every listener to reopen
 * after a Postgres restart.
 */
const FINISHED_REPLAY_POLLS = 3;

/**
 * Streams a run's events wherever its attempts execute: one queued (started later, here or
 * elsewhere), executing in another process (its events come over LISTEN/NOTIFY), or executing
 * here (its hub). Events are delivered once each, in id order: a gap in the ids, or a reconnect of
 * the listener, asks the executor to replay what was missed. The run's row is polled too, so a
 * stream whose executor died without an `end` still closes, with the run record.
 *
 * Ids count within one attempt of the run (each has its own hub; see {@link AttemptCursor}) and
 * go out as `<attempt>:<n>`, so a reconnect's `Last-Event-ID` says which attempt it counts in. An
 * attempt that ended because its process lost the database or handed the run back is followed by
 * the next (from the last checkpoint), with nothing lost between, whether that one runs here or
 * elsewhere. A later attempt's events while the followed one has not ended ask for the rest of
 * that one; if its end does not come within a few polls (its process died), or a replay asked for
 * never came, the stream ends with an `error` `events_missing` saying to rejoin or read the state.
 * It never drops events silently.
 */
export async function pipeFollow(
  ctx: ServerContext,
  reply: FastifyReply,
  threadId: string,
  runId: RunId,
  modes: ReadonlySet<string>,
  from: ResumePoint,
): Promise<void> {
  const stops: (() => void)[] = [];
  let unsubscribe: () => void = () => undefined;
  const stream = openTrackedSse(ctx, reply, { "x-rein-run-id": runId }, () => {
    unsubscribe();
    for (const stop of stops.splice(0)) stop();
  });
  if (from.after === 0) stream.send("run", { threadId, runId }, 0);
  const cursor = new AttemptCursor(from.after, from.attempt);
  const fanout = ctx.scale?.fanout;
  let awaitingReplay = false; // asked for a replay, and nothing new since: ask again next poll
  const replay = (): void => {
    if (!fanout) return;
    awaitingReplay = true;
    fanout.publish({ kind: "replay", runId, ...cursor.replayRequest() });
  };
  /** The hub of this process last followed (a taken-over attempt's stays until the next starts). */
  let local: RunHub | undefined;
  const deliver = (event: HubEvent): void => {
    const verdict = cursor.take(event);
    if (!verdict.send) {
      // The followed attempt was taken over: the next may already run here.
      if (cursor.handedOn) watchLocal();
      return;
    }
    awaitingReplay = false;
    if (ALWAYS.has(event.event) || modes.has(event.event))
      stream.send(event.event, event.data, verdict.id);
    if (event.event === "end" || event.event === "error") stream.close();
  };
  const followLocal = (hub: RunHub): void => {
    const verdict = cursor.admit(hub.attempt);
    if (verdict === "ahead") {
      // The rest of the attempt followed is in another process, if anywhere: ask it (the poll
      // gives up after a few tries); with no other process to ask, it is lost.
      if (fanout) replay();
      else endMissing(stream, threadId, runId, OVERTAKEN);
      return;
    }
    // An earlier attempt's hub, kept here: wait for one that starts after it.
    if (verdict === "ignore" && !stream.closed)
      stops.push(ctx.runs.onStart(runId, followLocal, hub));
    if (verdict !== "follow" || stream.closed) return;
    local = hub;
    unsubscribe();
    unsubscribe = hub.subscribe(cursor.last, (event) => {
      if (event !== null) deliver(event);
      // Finished without an end or a final error: nothing more comes from it.
      else if (!cursor.handedOn) stream.close();
    });
  };
  /** Follows the run's next attempt to start in this process (at once if it has one here). */
  function watchLocal(): void {
    if (!stream.closed) stops.push(ctx.runs.onStart(runId, followLocal, local));
  }
  watchLocal();
  if (fanout) {
    stops.push(
      fanout.subscribeRun(runId, (message) => {
        const verdict = cursor.admit(message.attempt);
        if (verdict === "ahead") replay(); // the rest of the followed attempt, and its end
        if (verdict !== "follow") return;
        // A gap: some events were lost on the way (a failed NOTIFY); ask for them again.
        if (message.event.id > cursor.last + 1) replay();
        else deliver(message.event);
      }),
      fanout.onReconnect(replay),
    );
    // Events sent before this subscription (a join after the run started elsewhere).
    replay();
  }
  stops.push(
    pollRun(ctx, stream, threadId, runId, {
      cursor,
      replay,
      canReplay: fanout !== undefined,
      awaitingReplay: () => awaitingReplay,
      runsHere: () => ctx.runs.executing(runId) || (local !== undefined && !local.finished),
    }),
  );
  await stream.done;
}

/** What {@link pollRun} asks of the stream it polls for. */
interface PolledFollower {
  cursor: AttemptCursor;
  /** Asks the executors to replay what the stream missed. */
  replay: () => void;
  /** Whether a replay can be asked for (other processes listen). */
  canReplay: boolean;
  /** Whether a replay asked for has not been answered. */
  awaitingReplay: () => boolean;
  /** Whether an attempt of the run goes on in this process (its hub delivers the end). */
  runsHere: () => boolean;
}

/**
 * Polls a followed run's row once a second; returns what stops it. A replay request is a
 * notification too, and is lost if the executor's own listener is down (a Postgres restart drops
 * every listener; each reopens on its own schedule). So a request nobody answered is repeated
 * each poll, a stream overtaken by a later attempt gives the followed one a few polls to end, and
 * a run that ended without its `end` reaching here gets a few more polls of asking (the executor
 * keeps a finished run's events for minutes) before the stream closes with the run's record.
 */
function pollRun(
  ctx: ServerContext,
  stream: SseStream,
  threadId: string,
  runId: RunId,
  follower: PolledFollower,
): () => void {
  const { cursor, replay } = follower;
  let [finishedPolls, overtakenPolls] = [0, 0];
  const poll = setInterval(() => {
    if (follower.awaitingReplay()) replay();
    if (cursor.overtaken && ++overtakenPolls > FINISHED_REPLAY_POLLS)
      return endMissing(stream, threadId, runId, OVERTAKEN);
    void ctx.store.getRun(runId).then(
      (run) => {
        if (!run || run.status === "running" || run.status === "queued") return;
        if (follower.runsHere()) return;
        finishedPolls += 1;
        if (follower.canReplay && finishedPolls <= FINISHED_REPLAY_POLLS) {
          replay();
          return;
        }
        const { options: _options, ...record } = run;
        stream.send("run", { threadId, runId, record });
        if (follower.awaitingReplay())
          endMissing(stream, threadId, runId, "the events it asked for again never came");
        else stream.close();
      },
      () => undefined,
    );
  }, 1000);
  poll.unref();
  return () => clearInterval(poll);
}
