/**
 * The outcome of the last answer on the decision screen: what was sent and the thread's status
 * now, an approval recorded, a note recorded, a refusal or error, or the conflict to decide again.
 */
import type { Outcome } from "../answer-flow.ts";
import { href } from "../router.ts";
import { Conflict } from "../screens/Conflict.tsx";

/** The outcome (nothing before an answer). */
export function OutcomeView(props: {
  outcome: Outcome | null;
  threadId: string;
  onDecideAgain: () => void;
}) {
  const { outcome, threadId } = props;
  if (!outcome) return null;
  if (outcome.kind === "sent")
    return (
      <div role="status" className="notice">
        <p>
          {outcome.text} The thread is now <strong>{outcome.result.status}</strong>
          {outcome.result.interrupts.length > 0
            ? `, with ${outcome.result.interrupts.length} question(s) still pending.`
            : "."}
        </p>
        <p>
          <a href={href({ screen: "queue" })}>Back to the queue</a> ·{" "}
          <a href={href({ screen: "thread", threadId })}>Open the thread</a>
        </p>
      </div>
    );
  if (outcome.kind === "steered" || outcome.kind === "approved")
    return (
      <p role="status" className="notice">
        {outcome.text}
      </p>
    );
  if (outcome.kind === "error" || outcome.kind === "refused")
    return (
      <p role="alert" className="error">
        {outcome.text}
      </p>
    );
  return <Conflict info={outcome.info} threadId={threadId} onDecideAgain={props.onDecideAgain} />;
}
