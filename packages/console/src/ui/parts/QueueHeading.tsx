/**
 * The queue's heading: its title, the range of the page on screen with the total pending, and
 * whether the live feed is connected; below it the key hint.
 */
import type { QueuePages } from "../pages.ts";

/** The title, the range and the feed's state. */
export function QueueHeading({ queue, range }: { queue: QueuePages; range: string }) {
  return (
    <div className="heading">
      <h1 id="queue-title">Pending approvals</h1>
      <p className="count" aria-live="polite">
        {range}
      </p>
      <p className={queue.live ? "live on" : "live"} role="status">
        {queue.live ? "Live" : queue.items ? "Reconnecting…" : "Connecting…"}
      </p>
    </div>
  );
}

/** The keys the queue answers to. */
export function KeyHint() {
  return (
    <p className="hint">
      Keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>Enter</kbd> opens, <kbd>x</kbd> selects,{" "}
      <kbd>a</kbd> accepts where allowed (never an irreversible action).
    </p>
  );
}

/** A notice (news, or an alert when `error`) and the feed's error, each where there is one. */
export function QueueNotices(props: {
  notice: { text: string; error: boolean } | null;
  feedError: string | null;
}) {
  const { notice, feedError } = props;
  return (
    <>
      {notice && (
        <p role={notice.error ? "alert" : "status"} className={notice.error ? "error" : "notice"}>
          {notice.text}
        </p>
      )}
      {feedError && (
        <p role="alert" className="error">
          {feedError}
        </p>
      )}
    </>
  );
}
