/**
 * Where a stream following a run in another process stands: which attempt of the run it follows
 * and the last event id delivered of it. Each attempt (a continuation, a takeover) has its own hub,
 * whose ids start again at 1, so ids alone cannot say whether an event is new.
 */

/**
 * Codes of an attempt's `error` after which the run goes on in a new attempt, from its last
 * checkpoint: its process lost the database (and so its lease), or handed the run back to the
 * queue as it shut down (a rolling deploy). A follower waits for that attempt instead of ending.
 */
const TAKEN_OVER = new Set(["store_unavailable", "fenced_out", "handed_over"]);

/** An attempt id as {@link RunHub} makes them: base-36 creation time, a dot, random base64url. */
const ATTEMPT_ID = /^[0-9a-z]{9,}\.[A-Za-z0-9_-]+$/;

/**
 * Where a stream resumes (a `Last-Event-ID`): after event `after` of `attempt`. An id sent by this
 * version is `<attempt>:<n>`; a plain number (an id of an earlier version) names no attempt.
 */
export interface ResumePoint {
  /** The last event id delivered (0: from the start). */
  after: number;
  /** The attempt `after` counts in; absent for a plain number. */
  attempt?: string;
}

/** An event's SSE id: `<attempt>:<n>`, or the plain number of an event that names no attempt. */
export function wireId(attempt: string | null | undefined, id: number): string | number {
  return attempt ? `${attempt}:${id}` : id;
}

/** Reads a `Last-Event-ID` header; anything unreadable resumes from the start. */
export function resumePoint(header: string | string[] | undefined): ResumePoint {
  const raw = (Array.isArray(header) ? header[0] : header)?.trim() ?? "";
  const colon = raw.lastIndexOf(":");
  const attempt = colon < 0 ? undefined : raw.slice(0, colon);
  const after = Number(colon < 0 ? raw : raw.slice(colon + 1));
  if (!Number.isSafeInteger(after) || after <= 0) return { after: 0 };
  if (attempt === undefined) return { after };
  return ATTEMPT_ID.test(attempt) ? { after, attempt } : { after: 0 };
}

/**
 * What to do with an event of some attempt: deliver it; ignore it; or, for a later attempt while
 * the followed one has not ended, hold it and ask for the rest of the followed one (its end may
 * yet show that the later attempt continues it without a gap).
 */
export type AttemptVerdict = "follow" | "ignore" | "ahead";

/** What to do with an event of the followed attempt. */
export type EventVerdict =
  /** Send it, under `id` (`<attempt>:<n>`, see {@link wireId}). */
  | { send: true; id: string | number }
  /** Already delivered, or an attempt's taken-over `error` (the next attempt goes on). */
  | { send: false };

/** The position of one joined stream across the attempts of its run. */
export class AttemptCursor {
  /** The last event id delivered, in the followed attempt's numbering. */
  last: number;
  /**
   * The attempt followed; null before the first event (or after a reconnect with a plain-number
   * id, which names none).
   */
  private attempt: string | null;
  /** The followed attempt ended with an error in {@link TAKEN_OVER}. */
  private ended = false;
  /** Something of the followed attempt was delivered (here, or before a reconnect). */
  private holds: boolean;

  /** A later attempt has sent events while the followed one has not ended. */
  private overtakenFlag = false;

  /**
   * @param afterId the `Last-Event-ID` the stream resumes after (0 for a new join).
   * @param resumed the attempt that id counts in, when the id named one.
   */
  constructor(afterId: number, resumed?: string) {
    this.last = afterId;
    this.attempt = resumed ?? null;
    this.holds = resumed !== undefined && afterId > 0;
  }

  /** The attempt followed, if known. */
  get following(): string | null {
    return this.attempt;
  }

  /** Whether the followed attempt ended taken over: the next attempt is to be followed. */
  get handedOn(): boolean {
    return this.ended;
  }

  /**
   * Whether a later attempt has sent events while the followed one has not ended: unless the
   * followed one's end comes soon, the events it sent after the last delivered are lost.
   */
  get overtaken(): boolean {
    return this.overtakenFlag;
  }

  /** What a replay request asks for: the events after the last delivered, of the attempt followed. */
  replayRequest(): { after: number; attempt?: string } {
    return { after: this.last, ...(this.attempt === null ? {} : { attempt: this.attempt }) };
  }

  /**
   * Whether an event of attempt `from` (undefined from processes of earlier versions) is to be
   * delivered: one of the attempt followed, the first attempt seen, or the next attempt after the
   * followed one ended taken over (its events were all delivered and the next starts from its
   * last checkpoint: nothing between is lost). An earlier attempt's (a finished hub another
   * process still keeps, answering a replay) is ignored. Any other later attempt is ahead.
   */
  admit(from: string | undefined): AttemptVerdict {
    if (from === undefined || from === this.attempt) return "follow";
    if (this.attempt !== null && from < this.attempt) return "ignore";
    if (this.holds && !this.ended) {
      this.overtakenFlag = true;
      return "ahead";
    }
    if (this.ended) [this.last, this.ended, this.holds] = [0, false, false];
    this.overtakenFlag = false;
    this.attempt = from;
    return "follow";
  }

  /** Records an admitted event as delivered and says whether (and under which id) to send it. */
  take(event: { id: number; event: string; data: unknown }): EventVerdict {
    if (event.id <= this.last) return { send: false };
    this.last = event.id;
    this.holds = true;
    if (event.event === "error" && TAKEN_OVER.has((event.data as { error?: string }).error ?? "")) {
      this.ended = true;
      return { send: false };
    }
    return { send: true, id: wireId(this.attempt, event.id) };
  }
}
