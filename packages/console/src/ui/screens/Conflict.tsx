/**
 * What a stale answer is shown: the server refused it (409) because the thread moved on; here is
 * the new head and what is pending now, and a way to decide again on the latest state.
 */
import type { Interrupt } from "@rein/client";
import { payloadSummary } from "../format.ts";
import { href } from "../router.ts";

/** The latest state a 409 carries. */
export interface ConflictInfo {
  message: string;
  reason: string | null;
  /** The checkpoint this screen was showing. */
  expectedCheckpointId: string;
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
          <dd>{info.expectedCheckpointId}</dd>
        </div>
        <div>
          <dt>Latest head checkpoint</dt>
          <dd data-testid="conflict-head">{info.headCheckpointId ?? "—"}</dd>
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
