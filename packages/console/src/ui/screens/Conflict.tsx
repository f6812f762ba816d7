/**
 * What a stale answer is shown: the server refused it (409) because the thread moved on; here is
 * the new head and what is pending now, and a way to decide again on the latest state.
 */
import type { Interrupt, InterruptListItem, ReinApiError } from "@rein/client";
import { describeError } from "../errors.ts";
import { payloadSummary } from "../format.ts";
import { Id } from "../parts/Id.tsx";
import { href } from "../router.ts";

/** The latest state a 409 carries. */
export interface ConflictInfo {
  message: string;
  reason: string | null;
  /** The checkpoint this screen was showing. */
  expectedCheckpointId: string;
  /** The thread's head now, as the thread screen shows it. */
  threadHeadCheckpointId: string | null;
  /** The head of the run that asked (a sub-agent's own checkpoint stream). */
  headCheckpointId: string | null;
  runStatus: string | null;
  pending: Interrupt[];
}

/** The conflict panel. */
export function Conflict(props: {
  info: ConflictInfo;
  threadId: string;
  onDecideAgain: () => void;
}) {
  const { info, threadId } = props;
  return (
    <section role="alert" className="conflict" aria-labelledby="conflict-title">
      <h2 id="conflict-title">Your answer was not applied: this screen was out of date</h2>
      <p>{info.message}</p>
      <dl className="meta">
        <div>
          <dt>You were looking at checkpoint</dt>
          <dd>
            <Id value={info.expectedCheckpointId} label="Checkpoint id you were looking at" />
          </dd>
        </div>
        <div>
          <dt>The thread's head now</dt>
          <dd data-testid="conflict-head">
            {info.threadHeadCheckpointId ? (
              <Id value={info.threadHeadCheckpointId} label="Head checkpoint id" />
            ) : (
              "—"
            )}
          </dd>
        </div>
        {info.runStatus && (
          <div>
            <dt>The run you answered is now</dt>
            <dd data-testid="conflict-run-status">{info.runStatus}</dd>
          </div>
        )}
      </dl>
      <h3>Pending now</h3>
      {info.pending.length === 0 ? (
        <p>Nothing is pending in this thread any more.</p>
      ) : (
        <ul className="pending-now" aria-label="Pending now">
          {info.pending.map((i) => (
            <li key={i.id}>
              <a href={href({ screen: "decision", threadId, interruptId: i.id })}>
                {[...i.namespace, i.node].join(" › ")}
              </a>{" "}
              — {payloadSummary(i.payload, 80)}
            </li>
          ))}
        </ul>
      )}
      <button type="button" onClick={props.onDecideAgain}>
        Decide again with the latest state
      </button>
    </section>
  );
}

/** What a 409 says changed, with the thread's head read after it. */
export function conflictInfo(
  error: ReinApiError,
  item: InterruptListItem,
  threadHead: string | null,
): ConflictInfo {
  const d = error.details;
  const latest = (
    typeof d["latest"] === "object" && d["latest"] !== null ? d["latest"] : {}
  ) as Record<string, unknown>;
  const pick = (key: string): unknown => d[key] ?? latest[key];
  const text = (key: string): string | null => {
    const value = pick(key);
    return typeof value === "string" ? value : null;
  };
  const pending = pick("pendingInterrupts");
  return {
    message: describeError(error),
    reason: typeof d["reason"] === "string" ? d["reason"] : null,
    expectedCheckpointId: item.checkpointId,
    threadHeadCheckpointId: threadHead,
    headCheckpointId: text("headCheckpointId"),
    runStatus: text("runStatus"),
    pending: Array.isArray(pending) ? (pending as ConflictInfo["pending"]) : [],
  };
}
